package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"mnemo/backup"
	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/storeopen"
)

func newBackupCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the whole store to FILE while it is in use (mnemo restore reads it)",
		Long: `Write a backup of the whole store: every record as it is (id, item, status,
created and updated times, expiry, supersession), service sandboxes and the audit
log included, from one consistent snapshot taken while other processes go on
reading and writing. A directory store writes a copy of its bbolt file (the change
feed and the learned vectors too; the search index and the other derived files are
rebuilt on restore); a postgres:// store writes a logical backup (JSON lines, one
REPEATABLE READ snapshot). FILE is replaced only once the backup is complete ("-"
writes to stdout). See docs/backup.md.`,
		Example: `  mnemo backup ~/backups/mnemo-$(date +%F).backup
  mnemo restore ~/backups/mnemo-2026-12-04.backup --db ~/restored`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.openedStore(cmd.Context())
			if err != nil {
				return err
			}
			b, ok := s.Engine.(backup.Backuper)
			if !ok {
				return contract.Unsupported("mnemo backup copies a store directory or a postgres:// store; %s is a server: run mnemo backup where its store is, or use `mnemo export --sandboxes`", s.Label)
			}
			var info backup.Info
			write := func(w io.Writer) error {
				var err error
				info, err = b.Backup(cmd.Context(), w)
				return err
			}
			if args[0] == "-" {
				if err := write(a.stdout); err != nil {
					return err
				}
				return nil
			}
			if err := writeReplacing(storeopen.ExpandHome(args[0]), 0o600, write); err != nil {
				return err
			}
			return a.answer(info, func(s *cliout.Screen) { cliout.DrawBackup(s, args[0], info) })
		},
	}
}

func newRestoreCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE --db DIR|postgres://...",
		Short: "Make a new store from a backup (mnemo backup's file); the store must be new or empty",
		Long: `Restore a backup into the store --db names, which must not exist yet or be empty:
a directory store takes either kind of backup (a bbolt copy becomes its file as it
is; a logical backup is written record by record), then is opened, which rebuilds
the search index, and checked like mnemo check. A postgres:// store (a new schema:
?schema=...) takes a logical backup. Every record comes back as it was: id, times,
status, expiry and supersession; service sandboxes and the audit log too.
"-" reads the backup from stdin. See docs/backup.md.`,
		Example: `  mnemo restore mnemo-2026-12-04.backup --db ~/restored
  mnemo restore pg.backup --db 'postgres://mnemo@db/mnemo?schema=restored'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.remoteURL() != "" {
				return contract.Invalid("mnemo restore makes a new store from a backup: name it with --db (a directory or a postgres:// URL), not --remote")
			}
			in, closeIn, err := a.openBackup(args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			loc := a.storeDir()
			if postgres.IsURL(loc) {
				s, err := storeopen.Postgres(cmd.Context(), loc, a.openOptions())
				if err != nil {
					return err
				}
				defer func() { _ = s.Close() }()
				r, ok := s.Engine.(interface {
					RestoreBackup(context.Context, io.Reader) (backup.Info, error)
				})
				if !ok {
					return contract.Unsupported("%s cannot restore a backup", s.Label)
				}
				info, err := r.RestoreBackup(cmd.Context(), in)
				if err != nil {
					return err
				}
				return a.answer(info, func(sc *cliout.Screen) { cliout.DrawRestored(sc, s.Label, info, nil) })
			}
			rep, err := bolt.RestoreBackup(cmd.Context(), in, storeopen.ExpandHome(loc), bolt.Options{Logger: a.logger})
			if err != nil {
				if rep.Check.Checks != nil {
					_ = a.answer(rep, func(sc *cliout.Screen) { cliout.DrawRestored(sc, rep.Dir, rep.Backup, &rep.Check) })
				}
				return err
			}
			return a.answer(rep, func(sc *cliout.Screen) { cliout.DrawRestored(sc, rep.Dir, rep.Backup, &rep.Check) })
		},
	}
}

// openBackup opens a backup file, or stdin for "-".
func (a *app) openBackup(name string) (io.Reader, func(), error) {
	if name == "-" {
		if a.isTerminal(a.stdin) {
			return nil, nil, usageError("restore - reads the backup from stdin, which is a terminal; pipe it in or name the file")
		}
		return a.stdin, func() {}, nil
	}
	f, err := os.Open(storeopen.ExpandHome(name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, contract.Invalid("backup file %s does not exist", name)
		}
		return nil, nil, contract.Invalid("cannot open backup file %s: %v", name, unwrapPathError(err))
	}
	return f, func() { _ = f.Close() }, nil
}
