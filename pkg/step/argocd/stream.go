package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safehttp"
)

// Stream is an open watch on one application: GET
// /api/v1/stream/applications?name=..., newline-delimited JSON messages
// {"result": {"type": ..., "application": {...}}} or, when the server gives
// up mid-stream, {"error": {...}}. Argo CD first sends the application as it
// is (ADDED), then every change.
type Stream struct {
	cancel  context.CancelFunc
	body    *safehttp.Body // bounds each message: Reset after every one
	dec     *json.Decoder
	op      string
	errText func(status int, body []byte) string // the client's safehttp.ErrorText
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
	a, err := c.hc.Open(req, "a message of the watch stream", safehttp.AnswerLimit)
	if !headerDeadline.Stop() && err == nil {
		// The deadline fired just as the headers arrived: the body is dead.
		a.Body.Close()
		cancel()
		return nil, &NetError{Op: op, Err: context.DeadlineExceeded}
	}
	if err != nil {
		cancel()
		return nil, c.transportError(op, err)
	}
	if a.StatusCode != http.StatusOK {
		defer cancel()
		defer a.Body.Close()
		return nil, c.apiError(op, a.StatusCode, a.Body.Head())
	}
	return &Stream{cancel: cancel, body: a.Body, dec: json.NewDecoder(a.Body), op: op, errText: c.errorText}, nil
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
	err := s.dec.Decode(&msg)
	s.body.Reset()
	if readlimit.IsTooLarge(err) {
		return nil, &APIError{Op: s.op, Status: http.StatusOK, Message: err.Error() + ": not read further"}
	}
	if err != nil {
		return nil, &NetError{Op: s.op, Err: err}
	}
	if msg.Error != nil {
		status := msg.Error.HTTPCode
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return nil, &APIError{Op: s.op, Status: status, Code: msg.Error.GrpcCode, Message: s.errText(status, []byte(msg.Error.Message))}
	}
	if msg.Result == nil {
		return nil, fmt.Errorf("%s: a message with neither result nor error", s.op)
	}
	return msg.Result, nil
}

// Close ends the stream.
func (s *Stream) Close() {
	s.cancel()
	s.body.Close()
}
