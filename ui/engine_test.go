package ui

import (
	"mnemo/engine/memory"
	"mnemo/ui/common"
)

func memoryEngine() *memory.Engine { return memory.New() }

func errorMsg(op string, err error) common.ErrorMsg { return common.ErrorMsg{Op: op, Err: err} }
