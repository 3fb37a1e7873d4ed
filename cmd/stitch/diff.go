package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/check"
	"stitchkit.dev/stitchkit/pkg/compile"
	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/pkg/review"
)

func init() {
	commandFactories = append(commandFactories, newDiffCommand)
}

func newDiffCommand(env *cliEnv) *cobra.Command {
	var (
		format       string
		suppressions string
		printSchema  bool
	)
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Classify the changes between two contract versions (exit 100 on breaking changes)",
		Long: `diff compares two versions of a contract and classifies every change on
every surface (HTTP, MCP, Agent, CLI, realtime) as breaking, warning or info.

OLD and NEW are each a contract folder, a graph.json file, or git:REF:DIR
(the folder DIR as committed at REF, read without touching the work tree).

Reviewed breaking changes are accepted by fingerprint in stitch-review.yaml
(found in the NEW contract folder, or given with --suppressions).

Exit codes: 0 no breaking change, 100 breaking changes found, 1 failure,
2 usage error.`,
		Example: `  stitch diff git:origin/main:contracts contracts
  stitch diff old/graph.json contracts --format json
  stitch diff git:origin/main:contracts contracts --format githubactions`,
		Args: func(cmd *cobra.Command, args []string) error {
			if printSchema {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if printSchema {
				_, err := env.stdout.Write(review.ReportSchema)
				return err
			}
			if !slices.Contains(review.Formats, format) {
				return exitWith(exitUsage, fmt.Errorf("unknown --format %q (want %s)", format, strings.Join(review.Formats, ", ")))
			}
			return runDiff(cmd.Context(), env, args[0], args[1], format, suppressions)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(review.Formats, ", "))
	cmd.Flags().StringVar(&suppressions, "suppressions", "", "suppressions file (default: "+review.SuppressionsFile+" in the NEW contract folder, if present)")
	cmd.Flags().BoolVar(&printSchema, "print-schema", false, "print the JSON Schema of the json report and exit")
	return cmd
}

func runDiff(ctx context.Context, env *cliEnv, oldArg, newArg, format, suppressionsPath string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	oldG, err := loadSide(ctx, oldArg)
	if err != nil {
		return exitWith(exitFailure, fmt.Errorf("diff: old side %s: %w", oldArg, err))
	}
	newG, err := loadSide(ctx, newArg)
	if err != nil {
		return exitWith(exitFailure, fmt.Errorf("diff: new side %s: %w", newArg, err))
	}
	opts := &review.Options{OldSource: oldArg, NewSource: newArg}
	if suppressionsPath == "" && !strings.HasPrefix(newArg, "git:") {
		if st, err := os.Stat(newArg); err == nil && st.IsDir() {
			if p := filepath.Join(newArg, review.SuppressionsFile); fileExists(p) {
				suppressionsPath = p
			}
		}
	}
	if suppressionsPath != "" {
		s, err := review.LoadSuppressions(suppressionsPath)
		if err != nil {
			return exitWith(exitFailure, fmt.Errorf("diff: %w", err))
		}
		opts.Suppressions = s
	}
	rep, err := review.Compare(oldG, newG, opts)
	if err != nil {
		return exitWith(exitFailure, fmt.Errorf("diff: comparison failed: %w", err))
	}
	if format == "githubactions" || format == "markdown" {
		// GitHub resolves annotation (and link) paths against the
		// repository root, wherever the command ran.
		if root := repoRoot(ctx); root != "" {
			rebaseFindings(rep, root)
		}
	}
	// Render fully before writing, so a failure never leaves a partial
	// report (or a "no breaking changes" line) behind.
	var buf bytes.Buffer
	if err := rep.Write(&buf, format); err != nil {
		return exitWith(exitFailure, fmt.Errorf("diff: %w", err))
	}
	if _, err := env.stdout.Write(buf.Bytes()); err != nil {
		return exitWith(exitFailure, err)
	}
	if rep.Breaking() > 0 {
		return exitWith(exitBreaking, nil)
	}
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// loadSide reads one side: git:REF:DIR, a graph.json file or a contract
// folder.
func loadSide(ctx context.Context, arg string) (*graph.Graph, error) {
	if rest, ok := strings.CutPrefix(arg, "git:"); ok {
		ref, dir, ok := strings.Cut(rest, ":")
		if !ok || ref == "" {
			return nil, fmt.Errorf("want git:REF:DIR, e.g. git:origin/main:contracts")
		}
		return loadGit(ctx, ref, dir)
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		return graph.Load(data)
	}
	g, err := check.Compile(ctx, arg)
	if err != nil {
		return nil, err
	}
	relocateSources(g, arg, "")
	return g, nil
}

// loadGit extracts the CUE files of the tree at ref (every *.cue file and
// cue.mod, so module imports resolve) into a temporary folder with git
// archive — the work tree and index are never touched — and compiles DIR
// there.
func loadGit(ctx context.Context, ref, dir string) (*graph.Graph, error) {
	if dir == "" {
		dir = "."
	}
	if filepath.IsAbs(dir) {
		return nil, fmt.Errorf("DIR %q must be relative to the current directory", dir)
	}
	if ref == "" || strings.HasPrefix(ref, "-") {
		// A ref starting with "-" would reach git as an option.
		return nil, fmt.Errorf("git revision %q is not a revision (it must not be empty or start with '-')", ref)
	}
	top := ""
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = top
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
		}
		return out, nil
	}
	if _, err := git("rev-parse", "--verify", "--quiet", ref+"^{tree}"); err != nil {
		return nil, fmt.Errorf("unknown git revision %q (fetch it first, e.g. actions/checkout with fetch-depth: 0)", ref)
	}
	prefixOut, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	inRepo := path.Clean(path.Join(strings.TrimSpace(string(prefixOut)), filepath.ToSlash(dir)))
	if inRepo == ".." || strings.HasPrefix(inRepo, "../") {
		return nil, fmt.Errorf("DIR %q is outside the git repository", dir)
	}
	// DIR is relative to the current directory (as git's REF:./path), but
	// git archive run in a subdirectory archives only that subtree: archive
	// the whole tree from the top level, so paths are repository paths and
	// a cue.mod above DIR comes along.
	topOut, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	top = strings.TrimSpace(string(topOut))
	tmp, err := os.MkdirTemp("", "stitch-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// Stream the archive instead of buffering the whole repository tree:
	// only .cue files and cue.mod are kept.
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", ref)
	archive.Dir = top
	var archiveErr bytes.Buffer
	archive.Stderr = &archiveErr
	stream, err := archive.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := archive.Start(); err != nil {
		return nil, fmt.Errorf("git archive: %w", err)
	}
	waited := false
	defer func() {
		if !waited {
			// Drain what the reader left so git exits, then reap it.
			_, _ = io.Copy(io.Discard, stream)
			_ = archive.Wait()
		}
	}()
	found := false
	tr := tar.NewReader(stream)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if msg := strings.TrimSpace(archiveErr.String()); msg != "" {
				return nil, fmt.Errorf("git archive %s: %s", ref, msg)
			}
			return nil, fmt.Errorf("reading git archive: %w", err)
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			continue
		}
		if !strings.HasSuffix(name, ".cue") && !strings.Contains("/"+name, "/cue.mod/") {
			continue
		}
		if inRepo == "." || strings.HasPrefix(name, inRepo+"/") {
			found = true
		}
		dst := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
	}
	_, _ = io.Copy(io.Discard, stream)
	waited = true
	if err := archive.Wait(); err != nil {
		return nil, fmt.Errorf("git archive %s: %s", ref, strings.TrimSpace(archiveErr.String()+" "+err.Error()))
	}
	if !found {
		return nil, fmt.Errorf("%s holds no .cue file at %s", ref, inRepo)
	}
	contractDir := filepath.Join(tmp, filepath.FromSlash(inRepo))
	g, err := check.Compile(ctx, contractDir)
	if err != nil {
		var ce *compile.Error
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("contract at %s does not compile:\n%s", ref, strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), ""))
		}
		return nil, err
	}
	relocateSources(g, contractDir, dir)
	return g, nil
}

// relocateSources rewrites source positions so annotations name files as
// the user (and GitHub) sees them: relative to the current directory, with
// the contract folder in front; base is the folder the contract was
// compiled from and shown is how to name it (base itself when empty).
func relocateSources(g *graph.Graph, base, shown string) {
	if shown == "" {
		shown = base
	}
	absBase, err := filepath.Abs(base)
	if err != nil {
		return
	}
	cwd, _ := os.Getwd()
	for k, p := range g.Sources {
		f := p.File
		switch {
		case f == "":
			continue
		case filepath.IsAbs(f):
			if rel, err := filepath.Rel(absBase, f); err == nil && !strings.HasPrefix(rel, "..") {
				f = filepath.Join(shown, rel)
			} else if cwd != "" {
				if rel, err := filepath.Rel(cwd, f); err == nil && !strings.HasPrefix(rel, "..") {
					f = rel
				}
			}
		case !strings.HasPrefix(filepath.Clean(f), filepath.Clean(shown)+string(filepath.Separator)):
			f = filepath.Join(shown, f)
		}
		p.File = filepath.ToSlash(filepath.Clean(f))
		g.Sources[k] = p
	}
}

// repoRoot returns the root of the repository the command runs in: the git
// top level, else $GITHUB_WORKSPACE, else "" (paths stay relative to the
// current directory).
func repoRoot(ctx context.Context) string {
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel")
	if out, err := cmd.Output(); err == nil {
		if root := strings.TrimSpace(string(out)); root != "" {
			return root
		}
	}
	return os.Getenv("GITHUB_WORKSPACE")
}

// rebaseFindings rewrites the finding positions, relative to the current
// directory, to be relative to root. A path that leaves root is kept.
func rebaseFindings(rep *review.Report, root string) {
	cwd, err := os.Getwd()
	if err != nil {
		return
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return
	}
	// Compare real paths: a temporary directory may be reached through a
	// symbolic link (macOS /var → /private/var).
	if r, err := filepath.EvalSymlinks(absRoot); err == nil {
		absRoot = r
	}
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = r
	}
	for i := range rep.Findings {
		p := &rep.Findings[i].Pos
		if p.File == "" {
			continue
		}
		abs := filepath.FromSlash(p.File)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		if rel, err := filepath.Rel(absRoot, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p.File = filepath.ToSlash(rel)
		}
	}
}
