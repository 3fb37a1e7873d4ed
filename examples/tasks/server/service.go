package server

import (
	"context"
	"errors"
	"time"

	"stitchkit.dev/stitchkit/examples/tasks/tasksapi"
	"stitchkit.dev/stitchkit/pkg/mount"
	"stitchkit.dev/stitchkit/pkg/project"
)

// Limits the contract leaves to the app.
const (
	// DefaultListLimit is the page size when ?limit is absent.
	DefaultListLimit = 20
	// DefaultSearchLimit is the result count when ?limit is absent.
	DefaultSearchLimit = 20
	// MaxFileBytes caps a file's content in bytes (the contract caps it at
	// 65536 characters, which UTF-8 may make larger).
	MaxFileBytes = 65536
)

// tasks implements tasksapi.TasksService over a Store.
type tasks struct {
	tasksapi.UnimplementedTasksService
	app *App
}

var _ tasksapi.TasksService = tasks{}

// taskError maps a store error onto the contract's codes. A title clash
// answers TASK_CONFLICT only where the operation declares it (create,
// update); rename declares no conflict code, so there it is a
// VALIDATION_ERROR on the title.
func taskError(err error, conflictDeclared bool) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return mount.NewError(tasksapi.CodeTaskNotFound, "")
	case errors.Is(err, ErrConflict) && conflictDeclared:
		return mount.NewError(tasksapi.CodeTaskConflict, "")
	case errors.Is(err, ErrConflict):
		return mount.Invalid(mount.Issue{In: project.PartInput, Path: "/title", Keyword: "unique", Message: "another task has this title"})
	}
	return err
}

func (s tasks) List(ctx context.Context, q tasksapi.TasksListQuery) (tasksapi.TasksListOutput, error) {
	limit := DefaultListLimit
	if q.Limit != nil {
		limit = int(*q.Limit)
	}
	cursor := ""
	if q.Cursor != nil {
		cursor = *q.Cursor
	}
	items, next, err := s.app.store.ListTasks(ctx, TaskFilter{Done: q.Done, Tags: q.Tag}, cursor, limit)
	if errors.Is(err, ErrBadCursor) {
		return tasksapi.TasksListOutput{}, mount.Invalid(mount.Issue{In: project.PartQuery, Path: "/cursor", Keyword: "cursor", Message: "not a cursor this server issued"})
	}
	if err != nil {
		return tasksapi.TasksListOutput{}, err
	}
	out := tasksapi.TasksListOutput{Items: items}
	if next != "" {
		out.Next = &next
	}
	return out, nil
}

func (s tasks) Search(ctx context.Context, q tasksapi.TasksSearchQuery) (tasksapi.TasksSearchOutput, error) {
	limit := DefaultSearchLimit
	if q.Limit != nil {
		limit = int(*q.Limit)
	}
	items, err := s.app.store.SearchTasks(ctx, q.Q, q.Fields, limit)
	return tasksapi.TasksSearchOutput{Items: items}, err
}

func (s tasks) Create(ctx context.Context, in tasksapi.TasksCreateInput) (tasksapi.TasksCreateOutput, error) {
	t, err := s.app.store.CreateTask(ctx, in.Title, in.Tags)
	if err != nil {
		return t, taskError(err, true)
	}
	s.app.changed(ctx, t)
	return t, nil
}

func (s tasks) Get(ctx context.Context, p tasksapi.TasksGetParams) (tasksapi.TasksGetOutput, error) {
	t, err := s.app.store.GetTask(ctx, p.ID)
	return t, taskError(err, false)
}

func (s tasks) Exists(ctx context.Context, p tasksapi.TasksExistsParams) error {
	_, err := s.app.store.GetTask(ctx, tasksapi.TaskID(p.ID))
	return taskError(err, false)
}

// update applies change and reports the changed task.
func (s tasks) update(ctx context.Context, id tasksapi.TaskID, conflictDeclared bool, change func(*tasksapi.Task) error) (tasksapi.Task, error) {
	t, err := s.app.store.UpdateTask(ctx, id, change)
	if err != nil {
		return t, taskError(err, conflictDeclared)
	}
	s.app.changed(ctx, t)
	return t, nil
}

func (s tasks) Update(ctx context.Context, p tasksapi.TasksUpdateParams, in tasksapi.TasksUpdateInput) (tasksapi.TasksUpdateOutput, error) {
	return s.update(ctx, p.ID, true, func(t *tasksapi.Task) error {
		t.Title, t.Done, t.Tags = in.Title, in.Done, in.Tags
		return nil
	})
}

func (s tasks) Rename(ctx context.Context, p tasksapi.TasksRenameParams, in tasksapi.TasksRenameInput) (tasksapi.TasksRenameOutput, error) {
	return s.update(ctx, tasksapi.TaskID(p.ID), false, func(t *tasksapi.Task) error {
		t.Title = in.Title
		return nil
	})
}

func (s tasks) Complete(ctx context.Context, p tasksapi.TasksCompleteParams) (tasksapi.TasksCompleteOutput, error) {
	return s.update(ctx, tasksapi.TaskID(p.ID), false, func(t *tasksapi.Task) error {
		t.Done = true
		return nil
	})
}

func (s tasks) Notify(ctx context.Context, p tasksapi.TasksNotifyParams, in tasksapi.TasksNotifyInput) (tasksapi.TasksNotifyOutput, error) {
	t, err := s.app.store.GetTask(ctx, tasksapi.TaskID(p.ID))
	if err != nil {
		return tasksapi.TasksNotifyOutput{}, taskError(err, false)
	}
	n := Notification{Task: t, Kind: in.Kind()}
	switch {
	case in.Email != nil:
		n.To = in.Email.Address
	case in.Sms != nil:
		n.To = in.Sms.Phone
	}
	if err := s.app.notify(ctx, n); err != nil {
		return tasksapi.TasksNotifyOutput{}, err
	}
	return tasksapi.TasksNotifyOutput{Sent: true}, nil
}

func (s tasks) Delete(ctx context.Context, p tasksapi.TasksDeleteParams) error {
	return taskError(s.app.store.DeleteTask(ctx, tasksapi.TaskID(p.ID)), false)
}

func (s tasks) Purge(ctx context.Context, q tasksapi.TasksPurgeQuery) error {
	var before time.Time
	if q.OlderThanDays != nil {
		before = s.app.now().Add(-time.Duration(*q.OlderThanDays) * 24 * time.Hour)
	}
	_, err := s.app.store.PurgeTasks(ctx, before)
	return err
}

// files implements tasksapi.FilesService over a Store.
type files struct {
	tasksapi.UnimplementedFilesService
	app *App
}

var _ tasksapi.FilesService = files{}

func (s files) List(ctx context.Context, q tasksapi.FilesListQuery) (tasksapi.FilesListOutput, error) {
	// A file belongs to a task when its path starts with the task's id and
	// a slash (t_1/notes.md).
	prefix := ""
	if q.Task != nil {
		prefix = string(*q.Task) + "/"
	}
	items, err := s.app.store.ListFiles(ctx, prefix)
	return tasksapi.FilesListOutput{Items: items}, err
}

func (s files) Get(ctx context.Context, p tasksapi.FilesGetParams) (tasksapi.FilesGetOutput, error) {
	f, err := s.app.store.GetFile(ctx, p.Path)
	if errors.Is(err, ErrNotFound) {
		return f, mount.NewError(tasksapi.CodeFileNotFound, "")
	}
	return f, err
}

func (s files) Upload(ctx context.Context, p tasksapi.FilesUploadParams, in tasksapi.FilesUploadInput) (tasksapi.FilesUploadOutput, error) {
	if len(in.Content) > MaxFileBytes {
		return tasksapi.File{}, mount.Errorf(tasksapi.CodeFileTooLarge, "File is too large: %d bytes, the limit is %d", len(in.Content), MaxFileBytes)
	}
	return s.app.store.PutFile(ctx, p.Path, in.Content)
}

// runtime implements tasksapi.RuntimeTools.
type runtime struct {
	tasksapi.UnimplementedRuntimeTools
	app *App
}

var _ tasksapi.RuntimeTools = runtime{}

func (s runtime) TaskStats(ctx context.Context, in tasksapi.TaskStatsInput) (tasksapi.TaskStatsOutput, error) {
	open, done, err := s.app.store.CountTasks(ctx, in.Tag)
	return tasksapi.TaskStatsOutput{Open: int64(open), Done: int64(done)}, err
}

// Notification is a reminder the notify operation sends.
type Notification struct {
	Task tasksapi.Task
	// Kind is "email" or "sms"; To the address or phone number.
	Kind, To string
}
