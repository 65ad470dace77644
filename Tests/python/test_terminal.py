"""The interactive session at a real terminal (issue 46): tmux runs `clinic` and the test types
into it as a person would — the arrow keys, Ctrl-A and Ctrl-E editing a line (libedit), Up
bringing back what was typed before, kept per account across sessions in a file only its owner
reads, and never a password. Piped input without a terminal is the CLI tests'
(SessionEndToEndTests run on a pseudo-terminal; the scripted commands read stdin)."""
import os
import shutil
import stat
import subprocess

import pytest

from conftest import CLINIC_BIN, PASSWORD, Clinic, wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing (scripts/env.sh installs it)")


class Tmux:
    """One tmux server of the test's own, one window. Its socket is named (`-L`), in tmux's
    own folder: a path in pytest's folder can pass the 108 bytes a socket's path may have."""

    def __init__(self, env):
        self.socket = "clinic-test-%d" % os.getpid()
        self.env = env

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True,
                              env=dict(os.environ, TERM="xterm-256color")).stdout

    def start(self, name):
        command = " ".join("%s='%s'" % (key, value) for key, value in self.env.items()) + " " + CLINIC_BIN
        # TERM is tmux's own (screen or tmux-256color), as for anyone working in tmux.
        self.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "50", "env " + command + "; sleep 60")
        self.name = name

    def keys(self, *keys):
        self.tmux("send-keys", "-t", self.name, *keys)

    def type(self, text):
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def screen(self):
        """The pane's text, its scrollback too (tmux drops the spaces at a line's end)."""
        return self.tmux("capture-pane", "-p", "-t", self.name, "-S", "-200")

    def wait_for(self, text, timeout=20):
        try:
            wait_until(lambda: text in self.screen(), timeout, repr(text))
        except AssertionError as error:
            raise AssertionError("%s; the terminal:\n%s" % (error, self.screen().rstrip()[-2000:])) from None

    def last_line(self):
        lines = [line for line in self.screen().split("\n") if line.strip()]
        return lines[-1] if lines else ""

    def kill(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    """The default directory (`clinic init`, 7,146 hospitals) with tina and theo registered,
    made once for the module (about 20 s on a debug build): each test gets a copy."""
    folder = tmp_path_factory.mktemp("terminal-directory")
    clinic = Clinic(str(folder))
    clinic.run("init", timeout=600)
    clinic.register("tina", city="Reno, NV")
    clinic.register("theo", city="Reno, NV")
    return folder


@pytest.fixture
def terminal(tmp_path, directory):
    # The database with its key (and a log, were one left), each file's private mode kept.
    for name in os.listdir(directory):
        if name.startswith("clinic.sqlite") and not name.endswith(".lock"):
            shutil.copy2(os.path.join(directory, name), os.path.join(tmp_path, name))
    clinic = Clinic(str(tmp_path))
    state = str(tmp_path / "state")
    env = {"CLINIC_DB": clinic.env["CLINIC_DB"], "CLINIC_SESSION": str(tmp_path / "tty-session"), "XDG_STATE_HOME": state,
           "NO_COLOR": "1", "TZ": "UTC"}
    tmux = Tmux(env)
    yield tmux, state
    tmux.kill()


def log_in(tmux, login):
    tmux.wait_for("Choose 1–3 [1]:")
    tmux.type("1")
    tmux.keys("Enter")
    tmux.wait_for("Login:")
    tmux.type(login)
    tmux.keys("Enter")
    tmux.wait_for("Password:")
    tmux.type(PASSWORD)
    tmux.keys("Enter")
    tmux.wait_for("Choose 1–10 [1]:")


def recalls(tmux, line, whose):
    """Up at the address prompt brings `line` back."""
    tmux.keys("Up")
    wait_until(lambda: tmux.last_line().endswith("Address or place: " + line), 10, whose + ": " + tmux.last_line())


def to_address_prompt(tmux, times_before):
    """Main menu → nearest clinics → another address; waits for the address's prompt number
    `times_before + 1` (the screen keeps the earlier ones)."""
    tmux.type("1")
    tmux.keys("Enter")
    wait_until(lambda: tmux.screen().count("Nearest to what?") > times_before, 20, "the nearest menu")
    tmux.type("2")
    tmux.keys("Enter")
    wait_until(lambda: tmux.screen().count("Address or place:") > times_before, 20, "the address prompt")


def test_lines_are_edited_with_arrows_and_ctrl_keys_and_remembered_per_account(terminal):
    tmux, state = terminal
    tmux.start("one")
    log_in(tmux, "tina")
    to_address_prompt(tmux, 0)
    # "eno, NV", Ctrl-A, "R", Ctrl-E, " 89501": the start and end of the line; then the left
    # arrow into the middle: "Reno, NV 8950" ← "1" typed before the last digit moved there.
    tmux.type("eno, NV")
    tmux.keys("C-a")
    tmux.type("R")
    tmux.keys("C-e")
    tmux.type(" 8950")
    tmux.keys("Left", "Left")
    tmux.type("x")
    tmux.keys("BSpace", "End")
    tmux.type("1")
    wait_until(lambda: tmux.last_line().endswith("Address or place: Reno, NV 89501"), 10, "the edited line: " + tmux.last_line())
    assert "^[" not in tmux.screen()
    tmux.keys("Enter")
    tmux.wait_for("Found: Reno, NV 89501")
    tmux.wait_for("Choose 1–5 [q]:")
    tmux.keys("Enter")
    tmux.wait_for("Choose 1–10 [1]:")
    # Unicode is edited by letters, not bytes: "Мнск", two lefts, "и" is "Минск" (libedit
    # through the session's UTF-8 decoding).
    to_address_prompt(tmux, 1)
    tmux.type("Мнск")
    tmux.keys("Left", "Left", "Left")
    tmux.type("и")
    wait_until(lambda: tmux.last_line().endswith("Address or place: Минск"), 10, "the Cyrillic line: " + tmux.last_line())
    tmux.keys("Enter")
    tmux.wait_for("Choose 1–5 [q]:")
    wait_until(lambda: tmux.screen().count("Choose 1–5 [q]:") >= 2, 20, "Minsk's nearest clinics")
    tmux.keys("Enter")
    wait_until(lambda: tmux.screen().count("Choose 1–10 [1]:") >= 3, 10, "the menu")
    # Up brings the addresses back, the latest first.
    to_address_prompt(tmux, 2)
    recalls(tmux, "Минск", "history")
    recalls(tmux, "Reno, NV 89501", "history")
    # Ctrl-C gives the line up and goes back, as before.
    tmux.keys("C-c")
    wait_until(lambda: tmux.screen().count("Choose 1–10 [1]:") >= 4, 10, "back to the menu")
    tmux.type("q")
    tmux.keys("Enter")
    tmux.wait_for("Goodbye.")

    # The history is a file of tina's own, readable by its owner only, without the password.
    folder = os.path.join(state, "clinic", "history")
    files = {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
    tinas = [content for content in files.values() if b"89501" in content]
    assert len(tinas) == 1, files
    assert not any(PASSWORD.encode() in content or PASSWORD.replace(" ", "\\040").encode() in content for content in files.values())
    assert all(stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600 for name in files)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700

    # A new session (tina is still signed in: the session file): her Up still knows it.
    tmux.start("two")
    tmux.wait_for("Choose 1–10 [1]:")
    to_address_prompt(tmux, 0)
    recalls(tmux, "Минск", "tina's history")
    tmux.keys("C-c")
    wait_until(lambda: tmux.screen().count("Choose 1–10 [1]:") >= 2, 10, "back to the menu")
    # Theo's history is his own: Up brings nothing back (the "z" typed after it is the line).
    tmux.type("10")
    tmux.keys("Enter")
    log_in(tmux, "theo")
    to_address_prompt(tmux, 1)
    tmux.keys("Up")
    tmux.type("z")
    wait_until(lambda: tmux.last_line().endswith("Address or place: z"), 10, "theo's empty history: " + tmux.last_line())


def search_reno_and_go_back(tmux):
    """At the address prompt: Reno found, its clinics listed, back to the menu (its second)."""
    tmux.type("Reno, NV 89501")
    tmux.keys("Enter")
    tmux.wait_for("Found: Reno, NV 89501")
    tmux.wait_for("Choose 1–5 [q]:")
    tmux.keys("Enter")
    wait_until(lambda: tmux.screen().count("Choose 1–10 [1]:") >= 2, 10, "the menu")


def test_only_answers_that_found_something_are_kept_each_kind_at_its_own_prompt(terminal):
    """Issue 55 (A9, B16): a search that found nothing is not kept (a sentence typed at the
    place prompt stays out of the file); a numbered menu has no history; the clinic number's
    prompt recalls clinic numbers only."""
    tmux, state = terminal
    tmux.start("kinds")
    log_in(tmux, "tina")
    to_address_prompt(tmux, 0)
    tmux.type("Qwzxq Vvvbnm")
    tmux.keys("Enter")
    wait_until(lambda: tmux.screen().count("Address or place:") >= 2, 20, "asked again after nothing was found")
    search_reno_and_go_back(tmux)
    # At the numbered menu, Up brings nothing back.
    tmux.keys("Up")
    tmux.type("z")
    wait_until(lambda: tmux.last_line().endswith("Choose 1–10 [1]: z"), 10, "the menu's empty history: " + tmux.last_line())
    tmux.keys("BSpace")
    to_address_prompt(tmux, 1)
    recalls(tmux, "Reno, NV 89501", "the place found")
    tmux.keys("Up")
    wait_until(lambda: tmux.last_line().endswith("Address or place: Reno, NV 89501"), 10, "nothing older: " + tmux.last_line())
    tmux.keys("C-c")
    wait_until(lambda: tmux.screen().count("Choose 1–10 [1]:") >= 3, 10, "back to the menu")
    tmux.type("q")
    tmux.keys("Enter")
    tmux.wait_for("Goodbye.")
    folder = os.path.join(state, "clinic", "history")
    contents = b"".join(open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder))
    assert b"89501" in contents and b"Qwzxq" not in contents and b"Vvvbnm" not in contents, contents


@pytest.mark.parametrize("unsafe", ["open", "link"])
def test_a_history_folder_open_to_others_or_a_link_keeps_no_history(terminal, tmp_path, unsafe):
    """Issue 55 (A9): CLI.md promises 0600 files in a 0700 folder; a folder made 0777, or a
    link to another folder, is refused with a word, and nothing is written into it."""
    tmux, state = terminal
    folder = os.path.join(state, "clinic", "history")
    os.makedirs(os.path.dirname(folder), mode=0o700)
    target = str(tmp_path / "elsewhere")
    if unsafe == "open":
        os.makedirs(folder)
        os.chmod(folder, 0o777)
        target = folder
    else:
        os.makedirs(target, mode=0o755)
        os.symlink(target, folder)
    tmux.start("unsafe")
    tmux.wait_for("No line history is kept")
    log_in(tmux, "tina")
    to_address_prompt(tmux, 0)
    search_reno_and_go_back(tmux)
    tmux.type("q")
    tmux.keys("Enter")
    tmux.wait_for("Goodbye.")
    assert os.listdir(target) == [], os.listdir(target)
    assert tmux.screen().count("No line history is kept") == 1, "said once"
