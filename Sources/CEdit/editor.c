#include "CEdit.h"

#include <histedit.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

struct clinic_editor {
    EditLine *el;
    History *history;
    char *prompt;
    int (*read_byte)(void);
    /* Set when a byte sequence of the line was not UTF-8 (the line is then unreadable). */
    int invalid;
};

static clinic_editor *editor_of(EditLine *el) {
    void *data = NULL;
    el_get(el, EL_CLIENTDATA, &data);
    return (clinic_editor *)data;
}

static char *prompt_of(EditLine *el) {
    clinic_editor *editor = editor_of(el);
    return editor && editor->prompt ? editor->prompt : "";
}

/* One character, decoded from UTF-8 (an invalid sequence is U+FFFD, which the session then
 * refuses as unreadable): 1, or 0 at the end of input, -1 when interrupted. */
static int read_char(EditLine *el, wchar_t *out) {
    clinic_editor *editor = editor_of(el);
    int byte = editor->read_byte();
    if (byte == -1) { *out = L'\0'; return 0; }
    if (byte < 0) { *out = L'\0'; return -1; }
    unsigned int first = (unsigned int)byte, value, more;
    if (first < 0x80) { *out = (wchar_t)first; return 1; }
    if ((first & 0xE0) == 0xC0) { value = first & 0x1F; more = 1; }
    else if ((first & 0xF0) == 0xE0) { value = first & 0x0F; more = 2; }
    else if ((first & 0xF8) == 0xF0) { value = first & 0x07; more = 3; }
    else { editor->invalid = 1; *out = (wchar_t)0xFFFD; return 1; }
    for (unsigned int i = 0; i < more; i++) {
        int next = editor->read_byte();
        if (next == -1) { *out = L'\0'; return 0; }
        if (next < 0) { *out = L'\0'; return -1; }
        if ((next & 0xC0) != 0x80) { editor->invalid = 1; *out = (wchar_t)0xFFFD; return 1; }
        value = (value << 6) | ((unsigned int)next & 0x3F);
    }
    *out = (wchar_t)value;
    return 1;
}

clinic_editor *clinic_editor_open(const char *program, int (*read_byte)(void)) {
    /* libedit turns its prompt and line between multibyte and wide text by the locale: in the
     * C locale a prompt with "–" or a Cyrillic letter cannot be turned, and libedit reads a
     * NULL. The session speaks UTF-8 whatever the environment's locale. */
    if (!setlocale(LC_CTYPE, "") || strcmp(nl_langinfo(CODESET), "UTF-8") != 0) {
        if (!setlocale(LC_CTYPE, "C.UTF-8")) { return NULL; }
    }
    clinic_editor *editor = calloc(1, sizeof *editor);
    if (!editor) { return NULL; }
    editor->read_byte = read_byte;
    editor->el = el_init(program, stdin, stdout, stderr);
    editor->history = history_init();
    if (!editor->el || !editor->history) { clinic_editor_close(editor); return NULL; }
    HistEvent event;
    history(editor->history, &event, H_SETSIZE, 500);
    history(editor->history, &event, H_SETUNIQUE, 1);
    el_set(editor->el, EL_CLIENTDATA, editor);
    el_set(editor->el, EL_EDITOR, "emacs");
    el_set(editor->el, EL_PROMPT, prompt_of);
    el_set(editor->el, EL_HIST, history, editor->history);
    el_set(editor->el, EL_GETCFN, read_char);
    /* Home, End and Delete as terminals send them (xterm's and screen's/tmux's forms alike),
     * whatever TERM says: else their escape codes' last byte lands in the line. */
    static const char *home[] = { "\033[H", "\033OH", "\033[1~", "\033[7~" };
    static const char *end[] = { "\033[F", "\033OF", "\033[4~", "\033[8~" };
    for (size_t i = 0; i < sizeof home / sizeof *home; i++) {
        el_set(editor->el, EL_BIND, home[i], "ed-move-to-beg", NULL);
        el_set(editor->el, EL_BIND, end[i], "ed-move-to-end", NULL);
    }
    el_set(editor->el, EL_BIND, "\033[3~", "ed-delete-next-char", NULL);
    /* The session's own Ctrl-C handling stays: libedit installs no signal handlers. */
    el_set(editor->el, EL_SIGNAL, 0);
    return editor;
}

const char *clinic_editor_line(clinic_editor *editor, const char *prompt, int *length) {
    free(editor->prompt);
    editor->prompt = strdup(prompt ? prompt : "");
    int count = 0;
    editor->invalid = 0;
    const char *line = el_gets(editor->el, &count);
    if (!line) { *length = count < 0 ? -1 : 0; return NULL; }
    size_t size = strlen(line);
    if (size > 0 && line[size - 1] == '\n') { size--; }
    *length = (int)size;
    return line;
}

int clinic_editor_had_invalid(clinic_editor *editor) {
    return editor->invalid;
}

void clinic_editor_remember(clinic_editor *editor, const char *line) {
    if (!line || !*line) { return; }
    HistEvent event;
    history(editor->history, &event, H_ENTER, line);
}

int clinic_editor_load(clinic_editor *editor, const char *path) {
    HistEvent event;
    history(editor->history, &event, H_CLEAR);
    return history(editor->history, &event, H_LOAD, path) < 0 ? -1 : 0;
}

int clinic_editor_save(clinic_editor *editor, const char *path) {
    HistEvent event;
    return history(editor->history, &event, H_SAVE, path) < 0 ? -1 : 0;
}

void clinic_editor_close(clinic_editor *editor) {
    if (!editor) { return; }
    if (editor->el) { el_end(editor->el); }
    if (editor->history) { history_end(editor->history); }
    free(editor->prompt);
    free(editor);
}
