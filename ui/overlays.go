package ui

import (
	"mnemo/ui/common"
	"mnemo/views/browse"
	"mnemo/views/fetch"
	"mnemo/views/help"
	"mnemo/views/recall"
)

func newHelp(c *common.Common) overlay    { return help.NewHelp(c) }
func newPalette(c *common.Common) overlay { return help.NewPalette(c) }

// extraViews are the views after explore, in tab order.
func extraViews(c *common.Common) []viewEntry {
	return []viewEntry{
		{name: common.ViewBrowse, title: "Browse", pane: browse.New(c)},
		{name: common.ViewFetch, title: "Fetch", pane: fetch.New(c)},
		{name: common.ViewRecall, title: "Recall", pane: recall.New(c)},
	}
}
