package resdeps

import (
	"context"
	"errors"
	"fmt"
)

// SourceConfig is an inventory as plan and import name it on their
// command lines: --manifests DIR (a folder of rendered manifests) or --live
// (the Argo CD API), never both.
type SourceConfig struct {
	Manifests string     // --manifests DIR
	Live      bool       // --live
	Conn      LiveConfig // --live's connection; what it leaves empty comes from ARGOCD_* (LiveConfig.Env)
}

// Given reports whether an inventory was asked for.
func (c SourceConfig) Given() bool { return c.Manifests != "" || c.Live }

// Open checks the configuration and reads what needs no spec: the folder,
// or the token and CA files of --live. Nil, nil when no inventory is given.
func (c SourceConfig) Open() (*Source, error) {
	switch {
	case c.Manifests != "" && c.Live:
		both := errors.New("--manifests and --live are two sources of the same inventory: give one")
		if _, err := (SourceConfig{Manifests: c.Manifests}).Open(); err != nil {
			return nil, errors.Join(both, err) // every problem in one pass
		}
		return nil, both
	case c.Live:
		conn := c.Conn.Env()
		l, err := NewLive(conn)
		if err != nil {
			return nil, fmt.Errorf("--live:\n%w", err)
		}
		return &Source{Name: "--live (" + conn.Server + ")", live: l}, nil
	case c.Manifests != "":
		apps, err := ReadDir(c.Manifests)
		if err != nil {
			return nil, fmt.Errorf("--manifests %s:\n%w", c.Manifests, err)
		}
		return &Source{Name: "--manifests " + c.Manifests, Apps: apps}, nil
	}
	return nil, nil
}

// Source is an opened inventory: a folder's apps, or the Argo CD API.
type Source struct {
	Name string // how messages name it: "--manifests DIR", "--live (SERVER)"
	Apps []App  // a folder's apps (Open read them); nil for --live
	live *Live
}

// Inventory returns the objects of the apps refs name: a folder's apps as
// they were read (all of them, refs aside), or each Application's managed
// resources read from the API. A failed read from the API is a
// *FetchError: not the input's fault.
func (s *Source) Inventory(ctx context.Context, refs []AppRef) ([]App, error) {
	if s.live == nil {
		return s.Apps, nil
	}
	apps, err := s.live.Inventory(ctx, refs)
	if err != nil {
		return nil, &FetchError{Err: fmt.Errorf("%s:\n%w", s.Name, err)}
	}
	return apps, nil
}

// FetchError is a failed read from the Argo CD API (exit 1, not 3).
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }
