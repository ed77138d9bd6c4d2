package main

import (
	"context"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/storecopy"
	"mnemo/storeopen"
)

func newCopyCommand(a *app) *cobra.Command {
	var (
		sample int
		reach  string
	)
	cmd := &cobra.Command{
		Use:   "copy SRC DST",
		Short: "Copy every record from one store to another (a directory or a postgres:// URL, either way)",
		Long: `Copy every record of SRC into DST: the item, status, created and updated times,
expiry and supersession. Each of SRC and DST is a store directory, a postgres://
URL or a running server's http(s):// URL (token from MNEMO_TOKEN). Records are
streamed page by page with a progress bar on a terminal; running the same copy
again resumes it (what was copied is replayed, never duplicated). At the end the
counts per status of both stores are compared and a sample of ids is read back
from both and compared field by field; the report is printed (JSON when piped).

Like export, the copy walks every record outside service sandboxes; --reach
names what to walk instead (a sandbox, say), and "source_records" in the report
counts every record the source holds, sandboxes included. Copy a sandbox before
the rest when records outside it are superseded by records inside it.`,
		Example: `  mnemo copy ~/.local/share/mnemo 'postgres://mnemo@db.example/mnemo?schema=team'
  mnemo copy 'postgres:///mnemo?host=/var/run/postgresql' ./store-backup`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseReachFlag("--reach", reach)
			if err != nil {
				return err
			}
			return a.copyStores(cmd.Context(), args[0], args[1], r, sample)
		},
	}
	cmd.Flags().IntVar(&sample, "verify-sample", 200, "how many ids to read back from both stores and compare")
	cmd.Flags().StringVar(&reach, "reach", "", `copy what this reach (JSON, e.g. {"at":"team:acme/service:digest","inherit":false,"descendants":true}) sees`)
	return cmd
}

// copyStores opens both stores, runs the copy (storecopy) and prints its report.
func (a *app) copyStores(ctx context.Context, srcLoc, dstLoc string, reach *contract.Reach, sample int) error {
	// The source is read only: a mistyped path is refused, never made a
	// new, empty store that the copy then reports as copied.
	srcOpts := a.openOptions()
	srcOpts.MustExist = true
	src, err := storeopen.Location(ctx, srcLoc, srcOpts)
	if err != nil {
		if contract.KindOf(err) == contract.KindNotFound {
			ce := contract.NotFound("the copy's source %s holds no store; check the path (nothing was created or copied)", srcLoc)
			ce.Err = err
			return ce
		}
		return err
	}
	defer func() { _ = src.Close() }()
	clock := &storecopy.Clock{}
	dstOpts := a.openOptions()
	dstOpts.Adjust = func(o *bolt.Options) { o.Clock = clock.Now }
	dst, err := storeopen.Location(ctx, dstLoc, dstOpts)
	if err != nil {
		return err
	}
	defer func() { _ = dst.Close() }()
	from := storecopy.Store{Engine: src.Engine, Label: src.Label}
	if src.CanCount() {
		from.Records = src.Records
	}
	opts := storecopy.Options{Reach: reach, Sample: sample, Clock: clock}
	var bar *cliout.CopyProgress
	if a.isTerminal(a.stderr) {
		bar = cliout.NewCopyProgress(a.stderr)
		opts.Progress, opts.Walked = bar.Update, bar.Finish
	}
	fresh := a.fillsFromEmpty(ctx, dst)
	rep, err := storecopy.Copy(ctx, from, storecopy.Store{Engine: dst.Engine, Label: dst.Label}, opts)
	if err != nil {
		return err
	}
	// A new local store the copy filled is rewritten with full pages once
	// let go, as after an import, its background work handed to a finisher
	// when large.
	if rep.Problem == "" {
		a.afterImport(dst, rep.Copied, fresh, false)
	}
	if err := a.answer(rep, func(s *cliout.Screen) { cliout.DrawCopy(s, rep) }); err != nil {
		return err
	}
	if rep.Problem != "" {
		return contract.EngineErr("the copy did not verify: %s", rep.Problem)
	}
	return nil
}
