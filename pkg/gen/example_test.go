package gen_test

import (
	"context"
	"fmt"
	"strings"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/gen"
)

// ExampleGenerate generates the package of examples/minimal and prints its
// files and the service interface a server implements.
func ExampleGenerate() {
	g, err := check.Compile(context.Background(), "../../examples/minimal")
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := gen.Generate(g, &gen.Options{Package: "notesapi"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Name)
		if f.Name != "bindings.go" {
			continue
		}
		src := string(f.Data)
		start := strings.Index(src, "type NotesService interface")
		end := strings.Index(src[start:], "}\n") + start
		for _, line := range strings.Split(src[start:end+1], "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "//") && strings.TrimSpace(line) != "" {
				fmt.Println("   ", strings.TrimSpace(line))
			}
		}
	}
	// Output:
	// bindings.go
	//     type NotesService interface {
	//     Create(ctx context.Context, in NotesCreateInput) (NotesCreateOutput, error)
	//     List(ctx context.Context) (NotesListOutput, error)
	//     mustEmbedUnimplementedNotesService()
	//     }
	// graph.go
	// graph.json
	// types.go
}
