package ui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/uitest"
)

// slowRecall answers recall only when its context ends, like a model that hangs.
type slowRecall struct {
	contract.Engine
	started chan struct{}
	ended   chan error
}

func (s *slowRecall) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	close(s.started)
	<-ctx.Done()
	s.ended <- ctx.Err()
	return contract.RecallAnswer{}, ctx.Err()
}

func TestRecallEscCancelsThroughContext(t *testing.T) {
	t.Parallel()
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowRecall{Engine: e, started: make(chan struct{}), ended: make(chan error, 1)}
	h := harnessOn(t, slow, "slow", 80, 24)
	m := h.m
	h.keys("4", "w", "h", "y")
	_, cmd := m.Update(KeyPress("enter"))
	r := m.recallView()
	if !r.Waiting() {
		t.Fatal("recall is not waiting after enter")
	}
	// run the request in the background the way the runtime would
	replies := make(chan tea.Msg, 4)
	go func() {
		if batch, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range batch {
				if c != nil {
					go func(c tea.Cmd) { replies <- c() }(c)
				}
			}
		}
	}()
	<-slow.started
	h.contains("thinking")
	h.keys("esc")
	select {
	case err := <-slow.ended:
		if err != context.Canceled {
			t.Fatalf("request ended with %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("esc did not cancel the request")
	}
	if r.Waiting() {
		t.Fatal("still waiting after esc")
	}
	h.contains("recall cancelled")
	// the cancelled request's answer arrives late and is dropped: no error shown
	for i := 0; i < 2; i++ {
		select {
		case msg := <-replies:
			h.send(msg)
		case <-time.After(300 * time.Millisecond):
		}
	}
	h.lacks("recall: ")
}

func TestRecallAnswerCitationsOpenRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("4", "t", "a", "b", "s", "enter")
	r := h.m.recallView()
	a := r.Answer()
	if a == nil || len(a.Citations) == 0 {
		t.Fatal("no answer with citations")
	}
	h.contains("answered by")
	h.contains("[1]")
	h.keys("enter")
	if !h.m.detailOpen || h.m.detail.ID() != a.Citations[0].ID {
		t.Fatalf("enter on citation 1 did not open %s", a.Citations[0].ID)
	}
}
