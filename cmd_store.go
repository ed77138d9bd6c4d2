package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/jsonerr"
)

// readItem reads one StoreItem JSON from stdin.
func (a *app) readItem() (contract.StoreItem, error) {
	var it contract.StoreItem
	data, err := a.readInput("one StoreItem as JSON")
	if err != nil {
		return it, err
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return it, contract.Invalid("stdin is empty; expected one StoreItem as JSON")
	}
	if missing := contract.MissingItemFields(data); missing != "" {
		return it, contract.Invalid("stdin is not a StoreItem: %s", missing)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&it); err != nil {
		return it, contract.Invalid("stdin is not a StoreItem: %s", jsonerr.Text(err))
	}
	if dec.More() {
		return it, contract.Invalid("stdin holds more than one JSON value; use `mnemo import` for many items")
	}
	return it, nil
}

func newStoreCommand(a *app) *cobra.Command {
	var (
		status    string
		expiresAt string
		wait      string
	)
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Store one item read from stdin",
		Long: `Store one StoreItem read from stdin as JSON. Prints the StoreReceipt: the item's
id (its fingerprint) and whether it was already stored (a replay). --status,
--expires-at and --wait make it a store_with.

Example:
  echo '{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"source":{"kind":"agent"}}}' | mnemo store`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, withOpts, err := writeOptionsFromFlags(cmd, status, expiresAt, wait)
			if err != nil {
				return err
			}
			item, err := a.readItem()
			if err != nil {
				return err
			}
			if err := item.Validate(); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			var receipt contract.StoreReceipt
			if withOpts {
				receipt, err = e.StoreWith(cmd.Context(), item, opts)
			} else {
				receipt, err = contract.Store(cmd.Context(), e, item)
			}
			if err != nil {
				return err
			}
			return a.writeJSON(receipt)
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "active (default) or candidate (awaits review)")
	cmd.Flags().StringVar(&expiresAt, "expires-at", "", "an RFC 3339 instant after which browse leaves the record out")
	cmd.Flags().StringVar(&wait, "wait", "", "visible (default) or accepted")
	return cmd
}

// writeOptionsFromFlags builds store_with options; withOpts is false when no
// flag was given (a plain store).
func writeOptionsFromFlags(cmd *cobra.Command, status, expiresAt, wait string) (contract.WriteOptions, bool, error) {
	var opts contract.WriteOptions
	changed := false
	if cmd.Flags().Changed("status") {
		changed = true
		s, ok := contract.ParseStatus(status)
		if !ok {
			return opts, false, contract.Invalid("a stored item's status must be `active` or `candidate`, not `%s`", status)
		}
		opts.Status = s
	}
	if cmd.Flags().Changed("expires-at") {
		changed = true
		t, err := parseInstant("--expires-at", expiresAt)
		if err != nil {
			return opts, false, err
		}
		opts.ExpiresAt = &t
	}
	if cmd.Flags().Changed("wait") {
		changed = true
		opts.Wait = contract.WaitFor(wait)
	}
	if err := opts.Validate(); err != nil {
		return opts, false, err
	}
	return opts, changed, nil
}

// parseInstant reads an RFC 3339 instant.
func parseInstant(what, s string) (time.Time, error) {
	t, err := contract.ParseTime(s)
	if err != nil {
		return time.Time{}, contract.Invalid("%s `%s` is not an RFC 3339 instant (like 2027-03-01T00:00:00Z)", what, s)
	}
	return t.UTC(), nil
}

func newFingerprintCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "fingerprint",
		Short: "Print the id of the item read from stdin",
		Long: `Print the id an item would be stored under: its fingerprint (SHA-256 of the
canonical JSON without observed_at and observed_actor, first 20 bytes, hex).`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			item, err := a.readItem()
			if err != nil {
				return err
			}
			if err := item.Validate(); err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, item.Fingerprint())
			return err
		},
	}
}
