//go:build !unix

package driver

import "os"

// terminalWidth is 0 where the terminal's size is not read: $COLUMNS or --width set
// the layout there.
func terminalWidth(*os.File) int { return 0 }
