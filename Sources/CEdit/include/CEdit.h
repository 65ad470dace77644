#ifndef CEDIT_H
#define CEDIT_H

/* The interactive session's line editor: libedit (the BSD line editor, Debian's libedit-dev)
 * behind a few calls Swift can make (el_set and history are variadic, which Swift cannot call).
 * The editor reads its bytes through `read_byte`, so that the session's own reader stays the
 * one place input is taken from: it returns a byte (0-255), -1 at the end of input, -2 when
 * Ctrl-C was pressed (the line is then given up). */

typedef struct clinic_editor clinic_editor;

clinic_editor *clinic_editor_open(const char *program, int (*read_byte)(void));

/* A line edited with emacs keys (arrows, Ctrl-A/E, history with Up/Down), without its
 * newline; NULL at the end of input or when interrupted. The text is the editor's: copy it
 * before the next call. `length` is its length in bytes (-1 on an error). */
const char *clinic_editor_line(clinic_editor *editor, const char *prompt, int *length);

/* Whether the last line had bytes that are not UTF-8 (libedit drops them with a bell). */
int clinic_editor_had_invalid(clinic_editor *editor);

/* Adds a line to the history (an empty one, or the same as the last, is not added). */
void clinic_editor_remember(clinic_editor *editor, const char *line);

/* Empties the history, then reads the history file at `path`; 0 when it was read. */
int clinic_editor_load(clinic_editor *editor, const char *path);

/* Writes the history to `path` (at most the last 500 lines); 0 when written. */
int clinic_editor_save(clinic_editor *editor, const char *path);

void clinic_editor_close(clinic_editor *editor);

#endif
