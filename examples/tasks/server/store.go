package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
)

// Store errors. The service maps them onto the contract's error codes.
var (
	// ErrNotFound: no task (or file) with that identity.
	ErrNotFound = errors.New("not found")
	// ErrConflict: another task already has that title.
	ErrConflict = errors.New("title already taken")
	// ErrBadCursor: the list cursor was not issued by this store.
	ErrBadCursor = errors.New("unknown cursor")
)

// TaskFilter selects tasks for [Store.ListTasks].
type TaskFilter struct {
	// Done, when set, keeps tasks whose done flag equals it.
	Done *bool
	// Tags keeps tasks carrying every one of them.
	Tags []tasksapi.Tag
}

// Store keeps the app's tasks and files. It is the seam a database
// replaces: the service holds no state of its own. Implementations must be
// safe for concurrent use. Tasks are returned in creation order.
type Store interface {
	// CreateTask stores a new task with a fresh id; ErrConflict when
	// another task has the title.
	CreateTask(ctx context.Context, title string, tags tasksapi.Tags) (tasksapi.Task, error)
	// GetTask returns a task or ErrNotFound.
	GetTask(ctx context.Context, id tasksapi.TaskID) (tasksapi.Task, error)
	// UpdateTask applies change to a task atomically and stores the
	// result; ErrNotFound, or ErrConflict when the new title is another
	// task's. change may return an error to abort.
	UpdateTask(ctx context.Context, id tasksapi.TaskID, change func(*tasksapi.Task) error) (tasksapi.Task, error)
	// DeleteTask removes a task or returns ErrNotFound.
	DeleteTask(ctx context.Context, id tasksapi.TaskID) error
	// PurgeTasks removes the tasks created before before (every task when
	// before is zero) and reports how many.
	PurgeTasks(ctx context.Context, before time.Time) (int, error)
	// ListTasks returns up to limit tasks matching f after cursor ("" for
	// the first page), and the cursor of the next page ("" when there is
	// none); ErrBadCursor for a cursor it did not issue.
	ListTasks(ctx context.Context, f TaskFilter, cursor string, limit int) ([]tasksapi.Task, string, error)
	// SearchTasks returns up to limit tasks whose title or tags (as fields
	// selects; both when empty) contain q, case-insensitively.
	SearchTasks(ctx context.Context, q string, fields []tasksapi.TasksSearchQueryFieldsItem, limit int) ([]tasksapi.Task, error)
	// CountTasks counts open and done tasks (carrying tag, when set).
	CountTasks(ctx context.Context, tag *tasksapi.Tag) (open, done int, err error)

	// PutFile stores a file's content under path (replacing it).
	PutFile(ctx context.Context, path, content string) (tasksapi.File, error)
	// GetFile returns a file's metadata or ErrNotFound.
	GetFile(ctx context.Context, path string) (tasksapi.File, error)
	// ListFiles returns the files whose path starts with prefix, sorted by
	// path.
	ListFiles(ctx context.Context, prefix string) ([]tasksapi.File, error)
}

// MemoryStore is a Store in memory, safe for concurrent use: one
// read-write mutex guards everything (an example, not a database).
type MemoryStore struct {
	now func() time.Time

	mu      sync.RWMutex
	seq     uint64
	tasks   map[tasksapi.TaskID]*storedTask
	order   []tasksapi.TaskID // creation order
	byTitle map[string]tasksapi.TaskID
	files   map[string]string
}

type storedTask struct {
	task    tasksapi.Task
	seq     uint64
	created time.Time
}

// NewMemoryStore returns an empty store. now is the clock purges compare
// against (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, tasks: map[tasksapi.TaskID]*storedTask{},
		byTitle: map[string]tasksapi.TaskID{}, files: map[string]string{}}
}

var _ Store = (*MemoryStore)(nil)

// clone copies a task so callers never share the store's slices.
func clone(t tasksapi.Task) tasksapi.Task {
	t.Tags = slices.Clone(t.Tags)
	return t
}

// CreateTask implements Store.
func (s *MemoryStore) CreateTask(_ context.Context, title string, tags tasksapi.Tags) (tasksapi.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.byTitle[title]; taken {
		return tasksapi.Task{}, ErrConflict
	}
	s.seq++
	id := tasksapi.TaskID("t_" + strconv.FormatUint(s.seq, 36))
	t := tasksapi.Task{ID: id, Title: title, Tags: slices.Clone(tags)}
	s.tasks[id] = &storedTask{task: t, seq: s.seq, created: s.now()}
	s.order = append(s.order, id)
	s.byTitle[title] = id
	return clone(t), nil
}

// GetTask implements Store.
func (s *MemoryStore) GetTask(_ context.Context, id tasksapi.TaskID) (tasksapi.Task, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.tasks[id]
	if !ok {
		return tasksapi.Task{}, ErrNotFound
	}
	return clone(st.task), nil
}

// UpdateTask implements Store.
func (s *MemoryStore) UpdateTask(_ context.Context, id tasksapi.TaskID, change func(*tasksapi.Task) error) (tasksapi.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	if !ok {
		return tasksapi.Task{}, ErrNotFound
	}
	t := clone(st.task)
	if err := change(&t); err != nil {
		return tasksapi.Task{}, err
	}
	t.ID = id
	if t.Title != st.task.Title {
		if _, taken := s.byTitle[t.Title]; taken {
			return tasksapi.Task{}, ErrConflict
		}
		delete(s.byTitle, st.task.Title)
		s.byTitle[t.Title] = id
	}
	st.task = t
	return clone(t), nil
}

// DeleteTask implements Store.
func (s *MemoryStore) DeleteTask(_ context.Context, id tasksapi.TaskID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[id]
	if !ok {
		return ErrNotFound
	}
	s.remove(st)
	return nil
}

func (s *MemoryStore) remove(st *storedTask) {
	delete(s.tasks, st.task.ID)
	delete(s.byTitle, st.task.Title)
	s.order = slices.DeleteFunc(s.order, func(id tasksapi.TaskID) bool { return id == st.task.ID })
}

// PurgeTasks implements Store.
func (s *MemoryStore) PurgeTasks(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []*storedTask
	for _, id := range s.order {
		if st := s.tasks[id]; before.IsZero() || st.created.Before(before) {
			gone = append(gone, st)
		}
	}
	for _, st := range gone {
		s.remove(st)
	}
	return len(gone), nil
}

// ListTasks implements Store. A cursor is "c_" and the creation sequence
// number of the last task of the previous page, so pages stay stable when
// tasks are added or deleted in between.
func (s *MemoryStore) ListTasks(_ context.Context, f TaskFilter, cursor string, limit int) ([]tasksapi.Task, string, error) {
	var after uint64
	if cursor != "" {
		n, err := strconv.ParseUint(strings.TrimPrefix(cursor, "c_"), 36, 64)
		if err != nil || !strings.HasPrefix(cursor, "c_") {
			return nil, "", ErrBadCursor
		}
		after = n
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []tasksapi.Task
	for _, id := range s.order {
		st := s.tasks[id]
		if st.seq <= after || !f.matches(st.task) {
			continue
		}
		if len(out) == limit {
			return out, "c_" + strconv.FormatUint(s.tasks[out[len(out)-1].ID].seq, 36), nil
		}
		out = append(out, clone(st.task))
	}
	return out, "", nil
}

func (f TaskFilter) matches(t tasksapi.Task) bool {
	if f.Done != nil && t.Done != *f.Done {
		return false
	}
	for _, tag := range f.Tags {
		if !slices.Contains(t.Tags, tag) {
			return false
		}
	}
	return true
}

// SearchTasks implements Store.
func (s *MemoryStore) SearchTasks(_ context.Context, q string, fields []tasksapi.TasksSearchQueryFieldsItem, limit int) ([]tasksapi.Task, error) {
	q = strings.ToLower(q)
	inTitle := len(fields) == 0 || slices.Contains(fields, tasksapi.TasksSearchQueryFieldsItemTitle)
	inTags := len(fields) == 0 || slices.Contains(fields, tasksapi.TasksSearchQueryFieldsItemTags)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []tasksapi.Task
	for _, id := range s.order {
		t := s.tasks[id].task
		hit := inTitle && strings.Contains(strings.ToLower(t.Title), q)
		for _, tag := range t.Tags {
			hit = hit || inTags && strings.Contains(string(tag), q)
		}
		if hit {
			if len(out) == limit {
				break
			}
			out = append(out, clone(t))
		}
	}
	return out, nil
}

// CountTasks implements Store.
func (s *MemoryStore) CountTasks(_ context.Context, tag *tasksapi.Tag) (open, done int, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, st := range s.tasks {
		if tag != nil && !slices.Contains(st.task.Tags, *tag) {
			continue
		}
		if st.task.Done {
			done++
		} else {
			open++
		}
	}
	return open, done, nil
}

// PutFile implements Store.
func (s *MemoryStore) PutFile(_ context.Context, path, content string) (tasksapi.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = content
	return tasksapi.File{Path: path, Size: int64(len(content))}, nil
}

// GetFile implements Store.
func (s *MemoryStore) GetFile(_ context.Context, path string) (tasksapi.File, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.files[path]
	if !ok {
		return tasksapi.File{}, fmt.Errorf("file %q: %w", path, ErrNotFound)
	}
	return tasksapi.File{Path: path, Size: int64(len(c))}, nil
}

// ListFiles implements Store.
func (s *MemoryStore) ListFiles(_ context.Context, prefix string) ([]tasksapi.File, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []tasksapi.File{}
	for p, c := range s.files {
		if strings.HasPrefix(p, prefix) {
			out = append(out, tasksapi.File{Path: p, Size: int64(len(c))})
		}
	}
	slices.SortFunc(out, func(a, b tasksapi.File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
