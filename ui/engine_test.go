package ui

import "mnemo/engine/memory"

func memoryEngine() *memory.Engine { return memory.New() }
