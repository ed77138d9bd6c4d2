package contract

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// A %w argument prints as %v would, and stays reachable as the cause.
func TestErrorKeepsItsCause(t *testing.T) {
	cause := fmt.Errorf("open mnemo.db: %w", fs.ErrPermission)
	err := EngineErr("cannot open the store: %w", cause)
	if err.Message != "cannot open the store: open mnemo.db: permission denied" {
		t.Fatalf("message %q", err.Message)
	}
	if errors.Unwrap(err) != cause {
		t.Fatalf("Unwrap = %v, want the cause", errors.Unwrap(err))
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatal("errors.Is does not see through to the cause")
	}
	if !errors.Is(err, ErrEngine) || errors.Is(err, ErrUnavailable) {
		t.Fatal("errors.Is by kind changed")
	}
	if got := EngineErr("cannot open the store: %v", cause); got.Err != nil || got.Message != err.Message {
		t.Fatalf("a %%v argument: %#v", got)
	}
	if got := Invalid("plain text"); got.Unwrap() != nil {
		t.Fatal("an error made from text has a cause")
	}
	two := Unavailable("%w and %w", context.Canceled, fs.ErrClosed)
	if !errors.Is(two, context.Canceled) || !errors.Is(two, fs.ErrClosed) || two.Message != "context canceled and file already closed" {
		t.Fatalf("two causes: %#v", two)
	}
}

func TestAsErrorIsTheOneConverter(t *testing.T) {
	if AsError(nil) != nil {
		t.Fatal("AsError(nil) is not nil")
	}
	ce := NotFound("record x does not exist")
	if AsError(fmt.Errorf("lookup: %w", ce)) != ce {
		t.Fatal("a wrapped contract error is not returned as it is")
	}
	foreign := errors.New("disk on fire")
	got := AsError(foreign)
	if got.Kind != KindEngine || got.Message != "disk on fire" || !errors.Is(got, foreign) {
		t.Fatalf("foreign error: %#v", got)
	}
	ended := AsError(fmt.Errorf("scan: %w", context.DeadlineExceeded))
	if ended.Kind != KindUnavailable || !errors.Is(ended, context.DeadlineExceeded) {
		t.Fatalf("ended context: %#v", ended)
	}
}

func TestContextErr(t *testing.T) {
	if ContextErr(context.Background()) != nil {
		t.Fatal("a live context has an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ContextErr(ctx)
	if !errors.Is(err, context.Canceled) || KindOf(err) != KindUnavailable || err.Error() != "unavailable: context canceled" {
		t.Fatalf("cancelled: %v", err)
	}
}
