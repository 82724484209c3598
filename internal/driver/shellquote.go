package driver

import (
	"strings"
)

// commandLine is name and args as one line of a POSIX shell, each argument quoted so
// that pasting the line runs the same command.
func commandLine(name string, args []string) string {
	words := make([]string, 0, 1+len(args))
	words = append(words, name)
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote returns s as one word of a POSIX shell: unchanged when every byte is one
// the shell never treats specially, else in single quotes, inside which only ' itself
// needs care: it becomes quote, backslash, quote, quote (close, escaped quote, reopen).
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, needsQuote) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// needsQuote: anything but letters, digits and _@%+=:,./- ; '~' and '#' are special at
// the start of a word, and every non-ASCII rune is quoted to be safe in any locale.
func needsQuote(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("_@%+=:,./-", r)
}
