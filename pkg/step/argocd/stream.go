package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Stream is an open watch on one application: GET
// /api/v1/stream/applications?name=..., newline-delimited JSON messages
// {"result": {"type": ..., "application": {...}}} or, when the server gives
// up mid-stream, {"error": {...}}. Argo CD first sends the application as it
// is (ADDED), then every change.
type Stream struct {
	cancel context.CancelFunc
	resp   *http.Response
	dec    *json.Decoder
	op     string
	redact func(string) string
}

// Watch opens the stream. Only the wait for the response headers is bounded
// by the request timeout; the stream itself lives until ctx ends or Close.
func (c *Client) Watch(ctx context.Context, name string) (*Stream, error) {
	op := "watch application " + name
	q := c.appQuery()
	q.Set("name", name)
	ctx, cancel := context.WithCancel(ctx)
	req, err := c.newRequest(ctx, http.MethodGet, "/api/v1/stream/applications", q, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	headerDeadline := time.AfterFunc(c.requestTimeout, cancel)
	c.calls.Add(1)
	resp, err := c.hc.Do(req)
	if !headerDeadline.Stop() && err == nil {
		// The deadline fired just as the headers arrived: the body is dead.
		resp.Body.Close()
		cancel()
		return nil, &NetError{Op: op, Err: context.DeadlineExceeded}
	}
	if err != nil {
		cancel()
		return nil, &NetError{Op: op, Err: stripURL(err)}
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		var buf [4096]byte
		n, _ := resp.Body.Read(buf[:])
		return nil, c.apiError(op, resp.StatusCode, buf[:n])
	}
	return &Stream{cancel: cancel, resp: resp, dec: json.NewDecoder(resp.Body), op: op, redact: c.Redact}, nil
}

// Next blocks for the next event. Any error ends the stream.
func (s *Stream) Next() (*WatchEvent, error) {
	var msg struct {
		Result *WatchEvent `json:"result"`
		Error  *struct {
			GrpcCode int    `json:"grpc_code"`
			HTTPCode int    `json:"http_code"`
			Message  string `json:"message"`
		} `json:"error"`
	}
	if err := s.dec.Decode(&msg); err != nil {
		return nil, &NetError{Op: s.op, Err: err}
	}
	if msg.Error != nil {
		status := msg.Error.HTTPCode
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return nil, &APIError{Op: s.op, Status: status, Code: msg.Error.GrpcCode, Message: s.redact(msg.Error.Message)}
	}
	if msg.Result == nil {
		return nil, fmt.Errorf("%s: a message with neither result nor error", s.op)
	}
	return msg.Result, nil
}

// Close ends the stream.
func (s *Stream) Close() {
	s.cancel()
	s.resp.Body.Close()
}
