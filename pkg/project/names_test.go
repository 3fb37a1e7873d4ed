package project

import (
	"strings"
	"testing"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ service, action, want string }{
		// Acceptance 15.
		{"users", "list", "list_users"},
		{"users", "create", "create_user"},
		{"users", "getActiveUser", "get_active_user_user"},
		{"categories", "get", "get_category"},
		{"news", "get", "get_news"},
		// Acceptance 16.
		{"bot-status", "get", "get_bot_status"},
		{"admin/analytics", "get", "get_admin_analytics"},
		{"notes", "get-user", "get-user_note"},
		// DESIGN §3.
		{"books", "list", "list_books"},
		{"books", "get", "get_book"},
		{"loans", "giveBack", "give_back_loan"},
		{"tasks", "complete", "complete_task"},
		{"classes", "delete", "delete_classe"}, // upstream rule: only "ies" and a final "s" are handled
		{"addresses", "update", "update_addresse"},
		{"_internal", "get", "get__internal"},
		{"tasks", "GetAll", "get_all_task"},
		{"user_settings", "get", "get_user_settings"},
		{"s", "o", "o_s"}, // singularising "s" would leave nothing
		{"a_s", "get", "get_a_s"},
	} {
		if got := ToolName(tc.service, tc.action); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.service, tc.action, got, tc.want)
		}
	}
}

func TestValidToolName(t *testing.T) {
	for _, ok := range []string{"a", "list_books", "get-user_note", strings.Repeat("x", 64)} {
		if err := ValidToolName(ok); err != nil {
			t.Errorf("ValidToolName(%q) = %v, want nil", ok, err)
		}
	}
	// Acceptance 17.
	for _, tc := range []struct{ name, want string }{
		{"do.thing", "must match"},
		{strings.Repeat("x", 65), "65 characters long"},
		{"", "empty"},
		{"héllo", "must match"},
	} {
		err := ValidToolName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidToolName(%q) = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestResolveToolName(t *testing.T) {
	// Acceptance 18: a service with no ASCII letter or digit fails when the
	// name is derived, and an explicit name rescues it.
	if _, err := ResolveToolName("///", "get", "", graph.MCP); err == nil || !strings.Contains(err.Error(), "declare tool.name") {
		t.Errorf("derived name of service /// = %v, want error", err)
	}
	if name, err := ResolveToolName("///", "get", "get_root", graph.MCP); err != nil || name != "get_root" {
		t.Errorf("explicit name = %q, %v", name, err)
	}
	if name, err := ResolveToolName("books", "list", "", graph.AGENT); err != nil || name != "list_books" {
		t.Errorf("derived = %q, %v", name, err)
	}
	if _, err := ResolveToolName("books", "list", "do.thing", graph.MCP); err == nil {
		t.Errorf("explicit do.thing accepted on MCP")
	}
	// Acceptance 21: CLI command names skip the charset check.
	if name, err := ResolveToolName("books", "list", "bücher", graph.CLI); err != nil || name != "bücher" {
		t.Errorf("CLI name = %q, %v", name, err)
	}
}
