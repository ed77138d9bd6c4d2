package ui

import (
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
)

// status is what the footer's right side and error line say: the toast, the
// last error, the shell's own background tasks and the spinner's frame.
type status struct {
	toast    string
	toastGen int
	errText  string // one line, in the footer
	errFull  string // the whole text, on `!`
	tasks    map[string]string
	spin     int
	ticking  bool
}

type spinTickMsg struct{}

type toastExpiredMsg struct{ gen int }

// say shows a toast for three seconds.
func (m *model) say(text string) tea.Cmd {
	s := &m.status
	s.toast = text
	s.toastGen++
	gen := s.toastGen
	return m.c.Tick(3*time.Second, func(time.Time) tea.Msg { return toastExpiredMsg{gen: gen} })
}

// fail shows an error on one footer line; `!` shows all of it. A lost server
// says how to retry.
func (m *model) fail(op string, err error) tea.Cmd {
	ce := contract.AsError(err)
	if errors.Is(err, contract.ErrUnavailable) {
		m.status.errText = "connection lost: " + ce.Message + " (r retries)"
	} else {
		m.status.errText = op + ": " + ce.Error()
	}
	m.status.errFull = op + " failed\n\n" + ce.Error()
	m.c.Log().Warn("operation failed", "op", op, "kind", string(ce.Kind), "error", ce.Message)
	return nil
}

// start and done bracket one of the shell's background tasks.
func (m *model) start(task, label string) { m.status.tasks[task] = label }
func (m *model) done(task string)         { delete(m.status.tasks, task) }

// busy names what the session waits for: a task of the shell's, else the
// focused pane's.
func (m *model) busy() string {
	for _, t := range m.status.tasks {
		return t
	}
	if m.detailOpen {
		if b := m.detail.Busy(); b != "" {
			return b
		}
	}
	return m.activeView().Busy()
}

func (m *model) spinTick() tea.Cmd {
	return m.c.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return spinTickMsg{} })
}

// statusMsg handles the spinner's ticks and the toasts' expiry.
func (m *model) statusMsg(msg tea.Msg) tea.Cmd {
	s := &m.status
	switch msg := msg.(type) {
	case spinTickMsg:
		if m.busy() == "" {
			s.ticking, s.spin = false, 0
			return nil
		}
		s.spin++
		return m.spinTick()
	case toastExpiredMsg:
		if msg.gen == s.toastGen {
			s.toast = ""
		}
	}
	return nil
}

// spinFrame is the spinner's frame, -1 until a task has run for about 150 ms
// (two ticks), so quick answers never flash it.
func (m *model) spinFrame() int {
	if m.status.ticking && m.status.spin >= 2 {
		return m.status.spin
	}
	return -1
}
