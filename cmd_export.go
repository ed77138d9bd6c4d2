package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/paging"
)

// exportPageLimit is how many records one export page carries; it matches the
// largest get, so each page's system fields come back in one call.
const exportPageLimit = contract.MaxGetIDs

// exportLine is one line of an export: the reference's {id, item} plus the
// record's status, expiry and successor, so an import reproduces the store.
type exportLine struct {
	ID           string             `json:"id"`
	Item         contract.StoreItem `json:"item"`
	Status       contract.Status    `json:"status,omitempty"`
	ExpiresAt    string             `json:"expires_at,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
}

func newExportCommand(a *app) *cobra.Command {
	var (
		filter    string
		out       string
		sandboxes bool
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write every matching record as JSONL (import reads it back)",
		Long: `Walk every record the filter matches through export pages and write one JSON line
per record: {"id", "item", "status"?, "expires_at"?, "superseded_by"?} (status is
left out for active records). Importing the file into an empty store reproduces
the same ids and statuses.

Like every read, export does not enter service sandboxes unless the filter's reach
names one: it says on stderr how many records it left out and where, and
--sandboxes exports every sandbox too. For a backup of the whole store (times,
audit log and all) use mnemo backup.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			walks, left, err := contract.SandboxWalks(cmd.Context(), e, f, sandboxes)
			if err != nil {
				return err
			}
			write := func(w io.Writer) error { return exportAll(cmd.Context(), e, walks, w) }
			if out == "" || out == "-" {
				err = write(a.stdout)
			} else {
				err = writeReplacing(out, 0o644, write)
			}
			if err == nil && len(left) > 0 {
				fmt.Fprintf(a.stderr, "mnemo export: left out %s: the export does not enter service sandboxes; --sandboxes exports them too, mnemo backup keeps the whole store\n", contract.SandboxNote(left))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "export only what this MetaFilter (JSON) matches")
	cmd.Flags().BoolVar(&sandboxes, "sandboxes", false, "export the records of every service sandbox too")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of stdout (replaced only when the export completes)")
	return cmd
}

// writeReplacing writes to a temporary file beside path and renames it into
// place once write succeeds, so a failed export or backup never leaves a
// truncated file that looks complete; the file gets mode.
func writeReplacing(path string, mode os.FileMode, write func(w io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return contract.Invalid("cannot write %s: %v", path, unwrapPathError(err))
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return contract.EngineErr("cannot write %s: %v", path, unwrapPathError(err))
	}
	if err := tmp.Close(); err != nil {
		return contract.EngineErr("cannot write %s: %v", path, unwrapPathError(err))
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return contract.EngineErr("cannot write %s: %v", path, unwrapPathError(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return contract.EngineErr("cannot write %s: %v", path, unwrapPathError(err))
	}
	return nil
}

// exportAll writes every record each filter matches as JSON lines.
func exportAll(ctx context.Context, e contract.Engine, walks []contract.MetaFilter, w io.Writer) error {
	out := cliout.NewJSONLines(w)
	var err error
	for _, f := range walks {
		if err = exportWalk(ctx, e, f, out); err != nil {
			break
		}
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = contract.EngineErr("cannot write the export: %w", ferr)
	}
	return err
}

// exportWalk writes every record the filter matches.
func exportWalk(ctx context.Context, e contract.Engine, f contract.MetaFilter, out *cliout.JSONLines) error {
	req := contract.ListRequest{Filter: f, Limit: exportPageLimit}
	return paging.Walk(nil, "export", func(cursor *string) (*string, error) {
		req.Cursor = cursor
		page, err := e.Export(ctx, req)
		if err != nil {
			return nil, err
		}
		if len(page.Incomplete) > 0 {
			return nil, contract.EngineErr("export holds %d items only partly (first: %s)", len(page.Incomplete), page.Incomplete[0])
		}
		lines, err := exportLines(ctx, e, f.Reach, page.Items)
		if err != nil {
			return nil, err
		}
		for i := range lines {
			if err := out.Write(&lines[i]); err != nil {
				return nil, contract.EngineErr("cannot write the export: %w", err)
			}
		}
		return page.NextCursor, nil
	})
}

// exportLines joins one export page with its records' system fields.
func exportLines(ctx context.Context, e contract.Engine, reach *contract.Reach, items []contract.Exported) ([]exportLine, error) {
	lines := make([]exportLine, len(items))
	if len(items) == 0 {
		return lines, nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
		lines[i] = exportLine{ID: it.ID, Item: it.Item}
	}
	byID := make(map[string]*contract.Record, len(items))
	recs, err := contract.GetRecordsInChunks(ctx, e, ids, reach)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	for i := range lines {
		// A record forgotten between the page and the read keeps the bare line.
		r, ok := byID[lines[i].ID]
		if !ok {
			continue
		}
		if r.Status != contract.StatusActive {
			lines[i].Status = r.Status
		}
		if r.ExpiresAt != nil {
			lines[i].ExpiresAt = contract.FormatMillis(*r.ExpiresAt)
		}
		if r.SupersededBy != nil {
			lines[i].SupersededBy = *r.SupersededBy
		}
	}
	return lines, nil
}
