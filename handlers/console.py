"""The terminal chat: the embedded default when no chat platform is configured.

Same commands and thread questions as Slack and Feishu:
  /digest 2026-01-28 owner/repo      (or any other /digest command, with or without the slash)
  reply 3 what could this break?     (a question in the thread of message #3)
  reply 3 2                          (after "Which commit?" in thread #3: its choice number 2)
  details 3 <sha>                    (the Details button of a commit in thread #3)
  level 4 too-high [sha]             (the "level too high / too low" buttons of message #4; also
                                     等级 4 太高|太低, the directions' and the command's Chinese words)
  quit
Messages are numbered as they are posted; thread replies are indented under their parent. The
console's own lines (the prompt, its usage lines, a reply's `[#2 in #1]` mark) are in the console
channel's language (`config lang`, else DEFAULT_LANG), from the catalogue's [console].

Ctrl-C (or SIGTERM) while a command runs cuts it short: one line says so, nothing more is shown,
and the process leaves. No log line is written into the chat: `run` logs to a file the chat
names once, at start (bot/core/logs.py).
"""

from __future__ import annotations

import asyncio
import os
import select
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from bot.conversation.grammar import LEVEL_WORDS, level_direction
from bot.core.chat_platform import AnswerHeader, CommitChoice, Content, Conversation, MessageRef
from bot.core.models import BotError
from bot.delivery.posted import content_data
from bot.i18n import text
from bot.levels.overlay import entries_of
from bot.render.labels import TERMINAL_READER
from bot.render.text import render_text, terminal_safe
from settings import default_data_dir

CHANNEL = "console"
INTERRUPT_GRACE = 0.25  # seconds a cut-short command gets to unwind before the chat leaves anyway


class ConsolePlatform:
    name = "console"
    supports_files = True
    send_dedupe_window: float | None = None  # one process, one terminal: nothing to deduplicate

    def __init__(self, out=None, report_dir: Path | None = None, lang: str = "en"):
        self.out = out or sys.stdout
        self.report_dir = report_dir or default_data_dir() / "reports"
        self.lang = lang  # the console's own words when a content says no language (DEFAULT_LANG)
        self.counter = 0
        self.roots: dict[str, str] = {}  # message number → its thread root
        self.shown: dict[str, Content] = {}  # message number → the content it shows (for `level N …`)
        self.choices: dict[str, CommitChoice] = {}  # thread root → its last "Which commit?" (`reply N 2`)
        self.muted = False  # after Ctrl-C: whatever a cut-short command still posts is not shown

    def emit(self, text: str) -> None:
        if self.muted:
            return
        self.out.write(text + "\n")
        self.out.flush()

    def _write(self, text: str) -> None:
        if not self.muted:
            self.out.write(text)
            self.out.flush()

    def _next(self, thread: str | None) -> MessageRef:
        self.counter += 1
        ref = MessageRef(CHANNEL, str(self.counter), thread)
        self.roots[ref.id] = ref.thread_root
        return ref

    def _lang_of(self, content) -> str:
        """The language a content is in (its own, else its digest's), else the console's."""
        lang = getattr(content, "lang", "") or getattr(getattr(content, "digest", None), "lang", "")
        return lang or self.lang

    def _render(self, content) -> str:
        """A content as the terminal shows it; a question's header names the person at the
        terminal in their language ("❓ you: …")."""
        if isinstance(content, AnswerHeader):
            lang = self._lang_of(content)
            line = text(lang, "console.asked", question=terminal_safe(content.question))
            if content.commit is not None:
                line += f"  ({content.commit.short_sha} {terminal_safe(content.commit.title)})"
            return line
        return render_text(content)

    def _in_thread(self, ref: MessageRef, lang: str) -> str:
        """`[#2 in #1]`: message #2, in the thread of message #1 (in the content's language)."""
        return text(lang, "console.in_thread", n=ref.id, root=ref.thread)

    def _show(self, ref: MessageRef, shown: str, tag: str = "", lang: str = "") -> None:
        if ref.thread:
            indented = shown.replace("\n", "\n      ")
            self.emit(f"  ↳ {self._in_thread(ref, lang or self.lang)}{tag} {indented}")
        else:
            self.emit(f"[#{ref.id}]{tag} {shown}")

    def _updated(self, content) -> str:
        return " " + text(self._lang_of(content), "console.updated")

    async def send(self, channel: str, content, *, thread: str | None = None, key: str | None = None) -> MessageRef:
        ref = self._next(thread)
        shown = self._render(content)
        if isinstance(content, CommitChoice):  # no buttons here: a choice is picked by its number
            self.choices[ref.thread_root] = content
            shown += "\n" + text(self._lang_of(content), "console.choose_hint", n=ref.thread_root)
        self._show(ref, shown, lang=self._lang_of(content))
        self.shown[ref.id] = content
        return ref

    async def update(self, ref: MessageRef, content) -> MessageRef:
        self._show(ref, self._render(content), self._updated(content), self._lang_of(content))
        self.shown[ref.id] = content
        return ref

    async def revise(self, ref: MessageRef, content) -> bool:
        shown_as = MessageRef(ref.channel, ref.id, ref.thread)
        self._show(shown_as, self._render(content), self._updated(content), self._lang_of(content))
        self.shown[ref.id] = content
        return True

    async def reply_private(self, conv: Conversation, content) -> None:
        self.emit(f"{text(self._lang_of(content), 'console.only_you')} {self._render(content)}")

    async def stream(
        self, channel: str, thread: str, pieces: AsyncIterator[str], *, conv=None, lang: str = ""
    ) -> MessageRef:
        ref = self._next(thread)
        self._write(f"  ↳ {self._in_thread(ref, lang or self.lang)} ")
        async for piece in pieces:
            self._write(terminal_safe(piece))
        self._write("\n")
        return ref  # the answer's message (the protocol's; the Router does not use it)

    async def send_unless_posted(
        self, channel: str, content, *, thread: str | None = None, key: str, since: float
    ) -> MessageRef | None:
        return None  # never asked: no dedupe window

    async def direct_channel(self, conv: Conversation) -> str | None:
        return conv.channel  # the terminal is one person's conversation with the bot

    async def reaches(self, channel: str) -> bool:
        return True  # one terminal, always there

    async def config_caveat(self, channel: str, questions: str, lang: str) -> str | None:
        return None

    async def upload(self, channel: str, thread: str | None, filename: str, text: str, title: str) -> None:
        self.report_dir.mkdir(parents=True, exist_ok=True)
        path = self.report_dir / filename
        path.write_text(text, encoding="utf-8")
        self.emit(f"  ↳ 📎 {path}")


class ConsoleChat:
    """Reads lines from stdin and feeds them to the conversation core until EOF or `quit`."""

    def __init__(self, chat, platform: ConsolePlatform, user: str = TERMINAL_READER, log_file: Path | None = None):
        self.chat = chat
        self.platform = platform
        self.user = user  # the person at the terminal: "you" in their language wherever a name is shown
        self.log_file = log_file  # where this process logs (said once, at start), or None (stderr)
        self.lang = platform.lang  # the chat's language as last read (said without Redis when it is gone)

    def _conv(self, thread: str | None = None) -> Conversation:
        return Conversation(platform="console", channel=CHANNEL, user=self.user, thread=thread)

    async def _lang(self) -> str:
        try:
            self.lang = (await self.chat.subs.config("console", CHANNEL)).lang
        except BotError:  # the storage is down: the commands will say so; these lines still show
            return self.chat.settings.default_lang
        return self.lang

    async def _say(self, key: str, **fields) -> None:
        self.platform.emit(text(await self._lang(), f"console.{key}", **fields))

    async def _root(self, number: str) -> str | None:
        """The thread root of message `number` ("3" or "#3"); None, said to the user, when there is none."""
        root = self.platform.roots.get(number.lstrip("#"))
        if root is None:
            await self._say("no_message", n=number.lstrip("#"))
        return root

    async def handle(self, line: str) -> bool:
        """One input line; False when the user wants to leave."""
        line = line.strip()
        if not line:
            return True
        words = line.split()
        head = words[0].lower()
        if head in ("quit", "exit", ":q"):
            return False
        if head == "reply":
            if len(words) < 3 or not words[1].lstrip("#").isdigit():
                await self._say("reply_usage")
            elif root := await self._root(words[1]):
                if picked := self._picked(root, words[2:]):
                    await self.chat.on_action(self._conv(root), "choose", picked)
                else:
                    await self.chat.on_message(self._conv(root), " ".join(words[2:]), mentioned=True)
            return True
        if head == "details":
            if len(words) != 3 or not words[1].lstrip("#").isdigit():
                await self._say("details_usage")
            elif root := await self._root(words[1]):
                await self.chat.on_action(self._conv(root), "details", {"sha": words[2], "thread": root})
            return True
        if head in LEVEL_WORDS:
            await self._level(words)
            return True
        text = line[len("/digest") :] if head == "/digest" else line
        await self.chat.on_command(self._conv(), text.strip(), prefix="/digest")
        if text.strip().lower() in ("help", "帮助", "?", "？"):
            await self._say("help")  # the terminal's own commands (reply, details, level), one line each
        return True

    def _picked(self, root: str, words: list[str]) -> dict | None:
        """`reply N 2` after "Which commit?" in thread N: the choose button of its choice 2 (the
        question asked, about that commit); None when the words are not a number of the choice."""
        choice = self.platform.choices.get(root)
        if choice is None or len(words) != 1 or not words[0].isdigit():
            return None
        number = int(words[0])
        if not 1 <= number <= len(choice.commits):
            return None
        commit = choice.commits[number - 1]
        repo = choice.repo_of[number - 1] if number <= len(choice.repo_of) else commit.repo
        return {"repo": repo, "sha": commit.sha, "thread": root, "question": choice.question, "lang": choice.lang}

    async def _level(self, words: list[str]) -> None:
        """`level N too-high|too-low [sha]` (`等级 N 太高|太低`): the Slack and Feishu level buttons
        of message #N (the sha names one of its commits when it lists several)."""
        direction = level_direction(words[2]) if len(words) > 2 else None
        if len(words) not in (3, 4) or not words[1].lstrip("#").isdigit() or direction is None:
            return self.platform.emit(text(await self._lang(), "levels.console_usage"))
        number = words[1].lstrip("#")
        if (root := await self._root(number)) is None:
            return
        content = self.platform.shown.get(number)
        shown = entries_of(content) if content is not None and content_data(content) is not None else ()
        if not shown:  # not a digest message whose commits can be corrected (a notice, a roll-up…)
            return self.platform.emit(text(await self._lang(), "levels.console_none", n=number))
        wanted = words[3].lower() if len(words) == 4 else ""
        matches = [e for e in shown if e.commit.sha.startswith(wanted)] if wanted else shown
        if len(matches) != 1:  # none, or several: say how to name one
            example = (matches or shown)[0].commit.short_sha
            return self.platform.emit(text(await self._lang(), "levels.console_which", n=number, sha=example))
        value = {"sha": matches[0].commit.sha, "dir": direction, "message": number}
        await self.chat.on_action(self._conv(root), "level", value)

    async def run(self, stdin=None, stop: asyncio.Event | None = None) -> None:
        stdin = stdin or sys.stdin
        stop = stop or asyncio.Event()
        lines = _reader(stdin)
        await self._say("prompt")
        if self.log_file is not None:
            await self._say("logs_at", path=self.log_file)
        stopper = asyncio.ensure_future(stop.wait())  # one waiter for the session, not one per line
        try:
            while not stop.is_set():
                if stdin.isatty():
                    self.platform._write("> ")
                line = await _until(lines.get(), stopper)
                if line is _STOPPED or line is None:  # Ctrl-C / SIGTERM at the prompt; EOF: a piped script ended
                    break
                going = await _until(self.handle(line), stopper, self._interrupted)
                if going is _STOPPED:  # Ctrl-C / SIGTERM while the command ran: it was cut short
                    break
                if not going:
                    break
        finally:
            stopper.cancel()

    def _interrupted(self) -> None:
        """The one line a cut-short command leaves; whatever it still posts is not shown."""
        self.platform.emit(text(self.lang, "console.interrupted"))
        self.platform.muted = True


_STOPPED = object()


async def _until(work, stopper: asyncio.Future, stopped=None):
    """`work`'s result, or _STOPPED once `stopper` is done first: then `stopped()` is called at
    once, and the work is cancelled and given INTERRUPT_GRACE to unwind (a thread it waits on is
    left to finish on its own)."""
    task = asyncio.ensure_future(work)
    await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        return task.result()
    if stopped is not None:
        stopped()
    task.cancel()
    await asyncio.wait({task}, timeout=INTERRUPT_GRACE)
    return _STOPPED


def no_input(stdin) -> bool:
    """Whether `stdin` is no terminal and will never hold a line: /dev/null (a container's stdin
    without `-i`), an empty file read to its end, a pipe already closed with nothing in it. A pipe
    still open (`docker run -i`, a slow script) may yet be written to: False, the chat waits."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
        return False
    if os.isatty(fd):
        return False
    mode = os.fstat(fd)
    if stat.S_ISCHR(mode.st_mode):
        return mode.st_rdev == os.stat(os.devnull).st_rdev
    if stat.S_ISREG(mode.st_mode):
        return os.lseek(fd, 0, os.SEEK_CUR) >= mode.st_size
    if stat.S_ISFIFO(mode.st_mode):
        readable, _, _ = select.select([fd], [], [], 0)
        if not readable:  # open, nothing written yet
            return False
        try:
            import fcntl
            import termios
        except ImportError:  # not a POSIX system: cannot tell without reading
            return False
        waiting = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(waiting, sys.byteorder) == 0  # readable, nothing in it: closed empty
    return False


def _reader(stdin) -> asyncio.Queue:
    """Lines from stdin via a daemon thread, so a blocked read never keeps the process alive."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def pump() -> None:
        try:
            for line in iter(stdin.readline, ""):
                loop.call_soon_threadsafe(queue.put_nowait, line)
            loop.call_soon_threadsafe(queue.put_nowait, None)
        except RuntimeError:  # the loop closed while we waited for input: nothing left to feed
            pass

    threading.Thread(target=pump, name="console-stdin", daemon=True).start()
    return queue
