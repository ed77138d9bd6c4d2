package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
)

func newImportCommand(a *app) *cobra.Command {
	var (
		status string
		batch  int
	)
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Store a JSONL file of items (any size), in batches",
		Long: `Store every line of a JSONL file ("-" reads stdin). A line is a StoreItem, or the
export format {"id", "item"} with mnemo's optional "status" ("active",
"candidate", "superseded" with "superseded_by") and "expires_at". Lines go to the
store in store_many batches of --batch items.

A line that is malformed or invalid, or whose id is not its item's fingerprint, is
reported with its line number and every other line is still stored. Running the
same file again replays what was stored. Prints {"stored", "replayed", "failed",
"errors": [{"line", "error"}]}; exits 0 when every line was stored or replayed,
2 otherwise. A progress bar goes to stderr when it is a terminal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defaultStatus, err := importStatusFlag(status)
			if err != nil {
				return err
			}
			if batch < 1 || batch > contract.MaxStoreMany {
				return usageError("--batch must be between 1 and 100")
			}
			in, size, closeIn, err := a.openImportSource(args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			return a.importStream(cmd.Context(), e, in, size, importSettings{status: defaultStatus, batch: batch})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "status of lines that name none: active (default) or candidate")
	cmd.Flags().IntVar(&batch, "batch", contract.MaxStoreMany, "items per store_many call (1..100)")
	return cmd
}

func importStatusFlag(status string) (contract.Status, error) {
	switch status {
	case "", string(contract.StatusActive):
		return contract.StatusActive, nil
	case string(contract.StatusCandidate):
		return contract.StatusCandidate, nil
	}
	return "", contract.Invalid("--status must be `active` or `candidate`, not `%s`", status)
}

// openImportSource opens FILE, or stdin for "-"; size is 0 when unknown.
func (a *app) openImportSource(name string) (io.Reader, int64, func(), error) {
	if name == "-" {
		if a.isTerminal(a.stdin) {
			return nil, 0, nil, usageError("import - reads JSONL from stdin, which is a terminal; pipe a file in or name it")
		}
		return a.stdin, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil, contract.Invalid("import file %s does not exist", name)
		}
		return nil, 0, nil, contract.Invalid("cannot open import file %s: %v", name, unwrapPathError(err))
	}
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { _ = f.Close() }, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type importSettings struct {
	status contract.Status
	batch  int
}

// importStream runs an import and prints its summary on stdout in every case.
func (a *app) importStream(ctx context.Context, e contract.Engine, in io.Reader, size int64, s importSettings) error {
	im := &importer{engine: e, batch: s.batch, defaultStatus: s.status, logger: a.logger}
	var bar *progressBar
	if a.isTerminal(a.stderr) {
		bar = newProgressBar(a.stderr, size, time.Now)
		im.onProgress = bar.update
	}
	started := time.Now()
	summary, err := im.run(ctx, in)
	if bar != nil {
		bar.finish()
	}
	elapsed := time.Since(started)
	a.logger.Info("import", "stored", summary.Stored, "replayed", summary.Replayed, "failed", summary.Failed,
		"seconds", elapsed.Seconds())
	for _, u := range im.unknownMeta {
		fmt.Fprintf(a.stderr, "mnemo import: line %d: meta key %q is not part of the contract; it is ignored (not kept) wherever it appears in this file\n", u.Line, u.Key)
	}
	if werr := a.answer(summary, func(s *screen) { drawImport(s, summary, a.holds(ctx, e)) }); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if summary.Failed > 0 {
		return exitError{code: exitInvalid}
	}
	return nil
}
