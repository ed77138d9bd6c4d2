package main

import (
	"github.com/spf13/cobra"

	"mnemo/contract"
)

func newReviewCommand(a *app) *cobra.Command {
	var approve, reject bool
	cmd := &cobra.Command{
		Use:   "review ID (--approve | --reject)",
		Short: "Approve or reject a candidate memory",
		Long: `Approve a candidate (it becomes active; prints the updated record) or reject it
(it is forgotten; prints {"forgotten": 1}). A record that is not a candidate is a
conflict (exit 6); an unknown id is not found (exit 4).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.firstIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if approve == reject {
				return usageError("review takes exactly one of --approve or --reject")
			}
			req := contract.ReviewRequest{ID: args[0], Action: contract.ReviewApprove}
			if reject {
				req.Action = contract.ReviewReject
			}
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			result, err := e.Review(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.writeJSON(result)
		},
	}
	cmd.Flags().BoolVar(&approve, "approve", false, "make the candidate active")
	cmd.Flags().BoolVar(&reject, "reject", false, "forget the candidate")
	return cmd
}

func newSupersedeCommand(a *app) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "supersede ID --by ID",
		Short: "Mark a record as superseded by another",
		Long: `Mark record ID as superseded by record --by (both must exist). Prints the
updated record. Superseded records stay listed but leave fetch and recall.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.firstIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("by") {
				return usageError("supersede needs --by ID, the record that replaces it")
			}
			req := contract.SupersedeRequest{ID: args[0], By: by}
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			rec, err := e.Supersede(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.writeJSON(rec)
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "the id of the record that supersedes it")
	_ = cmd.RegisterFlagCompletionFunc("by", a.idFlag)
	return cmd
}
