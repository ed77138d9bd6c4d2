package browse

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
)

// FuzzEditorOperands types arbitrary operands into every field with every
// operator: building never panics, and whatever the editor applies is a valid
// browse query.
func FuzzEditorOperands(f *testing.F) {
	for _, s := range []string{"tabs", "0.5", "0.2..0.9", "2026-11-01", "2026-11-01..2026-11-30", "team:acme", "..", "É", "1e400"} {
		f.Add(s, 0, 0)
	}
	f.Fuzz(func(t *testing.T, operand string, field, op int) {
		c := &common.Common{Keys: uitest.Keys(), Styles: common.NewStyles(true, false)}
		e := newEditor(c, nil, nil, nil)
		fr := e.fields[int(uint(field)%uint(len(e.fields)))]
		fr.op = int(uint(op) % uint(len(fr.ops)))
		for _, r := range operand {
			fr.input.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		out, err := e.build()
		if err != nil {
			return
		}
		q := contract.BrowseQuery{Status: out.status, Kind: out.kinds, Filters: out.filters}
		if verr := q.Validate(); verr != nil {
			// refused by the contract: the editor shows the message instead of applying
			if cmd := e.apply(); cmd != nil {
				t.Fatalf("editor applied an invalid query: %v", verr)
			}
			if !strings.Contains(e.view(80, 24), strings.SplitN(contract.AsError(verr).Message, "\n", 2)[0][:min(10, len(contract.AsError(verr).Message))]) {
				t.Fatalf("editor does not show the refusal %q", verr)
			}
		}
	})
}
