package ui

import (
	"mnemo/ui/common"
	"mnemo/views/help"
)

func newHelp(c *common.Common) overlay    { return help.NewHelp(c) }
func newPalette(c *common.Common) overlay { return help.NewPalette(c) }

// extraViews are the views after explore, in tab order.
func extraViews(c *common.Common) []viewEntry { return nil }
