package validate

import (
	"cmp"
	"slices"
)

// sortIssues orders issues by path, keyword and message and drops exact
// repeats (two arms of one schema can report the same leaf).
func sortIssues(is []Issue) []Issue {
	slices.SortStableFunc(is, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Keyword, b.Keyword), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(is)
}
