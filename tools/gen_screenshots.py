"""The pictures of a digest in Slack and in Feishu (docs/images/digest-slack.png, digest-feishu.png).

A sample day of a made-up repository (`acme/engine`, analyses written as an LLM writes them) goes
through the bot's own delivery plan and renderers — `bot/render/slack.py` (Block Kit) and
`bot/render/feishu.py` (cards 2.0), exactly the payloads the platforms receive — and each payload is
drawn as a plain HTML mock of that client, then photographed by Playwright driving the system's
Chromium (no browser download; `CHROMIUM=/path` to choose one):

    .venv/bin/python tools/gen_screenshots.py [--out docs/images] [--html DIR]

The mocks draw what the payloads hold (headers, sections, context lines, buttons, card headers,
tags, Markdown, folded panels); fonts, spacing and icons are approximations, not the clients'.
Chinese text and emoji need fonts that have them (Debian: `fonts-wqy-microhei`,
`fonts-noto-color-emoji`); without them Chromium draws empty boxes.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import os
import re
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.core.models import Analysis, ChangeType, Commit, Cost, Coverage, Digest, DigestEntry, Importance, Insights  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.delivery.post import Plan, parent_content, thread_contents  # noqa: E402
from bot.render import feishu, slack  # noqa: E402

REPO, URL = "acme/engine", "https://github.com/acme/engine"
REPORT = "https://digest.example.com/r/3f9c2a"
H, M, L = Importance.HIGH, Importance.MEDIUM, Importance.LOW

# (title, author, PR, type, level, {lang: (reason, summary, impact, insight, risks, recommendations)})
COMMITS = [
    (
        "[Core] Remove the deprecated --swap-space flag",
        "Mei Lin",
        4812,
        ChangeType.REMOVAL,
        H,
        {
            "en": (
                "removes a public CLI flag: launch scripts that pass `--swap-space` now fail at start-up",
                "Deletes `--swap-space` and the CPU swap pool behind it; preemption now always recomputes.",
                "Everyone who starts the server with `--swap-space` (common in older deployment guides).",
                "The scheduler loses its swap path: one preemption mode left, simpler to reason about.",
                ("Deployments pinned to the flag fail to start after upgrading.",),
                ("Announce it in the release notes with the replacement (`--preemption-mode recompute`).",),
            ),
            "zh": (
                "删除了公开的命令行参数：仍传 `--swap-space` 的启动脚本会在启动时报错",
                "删除 `--swap-space` 及其背后的 CPU 交换池；抢占一律改为重算。",
                "所有用 `--swap-space` 启动服务的部署（旧版部署文档中很常见）。",
                "调度器去掉了交换路径，只剩一种抢占模式，更易推理。",
                ("固定使用该参数的部署升级后无法启动。",),
                ("在发布说明中写明替代方式（`--preemption-mode recompute`）。",),
            ),
        },
    ),
    (
        "[Perf] Fuse RMSNorm into the FP8 quantisation kernel",
        "Arjun Rao",
        4807,
        ChangeType.PERFORMANCE,
        M,
        {
            "en": (
                "changes a hot kernel on the FP8 path",
                "One kernel now normalises and quantises, saving a pass over the activations.",
                "FP8 models on Hopper GPUs: about 4% faster decoding in the PR's benchmark.",
                "Removes one memory round trip per layer.",
                ("Numerical drift if the fused kernel rounds differently from the two-step path.",),
                ("Compare perplexity on one FP8 model before and after.",),
            ),
            "zh": (
                "改动了 FP8 路径上的热点 kernel",
                "一个 kernel 同时完成归一化和量化，少读一遍激活值。",
                "Hopper GPU 上的 FP8 模型：PR 的基准中解码快约 4%。",
                "每层少一次显存往返。",
                ("融合后的舍入若与两步实现不同，数值可能漂移。",),
                ("在一个 FP8 模型上对比前后困惑度。",),
            ),
        },
    ),
    (
        "[Bugfix] Scheduler: preempt the newest request first",
        "Sofia García",
        4803,
        ChangeType.BUGFIX,
        M,
        {
            "en": (
                "changes which request is preempted under memory pressure",
                "Under memory pressure the newest request is preempted, not the oldest, as documented.",
                "Long-running requests no longer restart when short ones arrive.",
                "",
                ("Latency of newly arrived requests rises under load.",),
                (),
            ),
            "zh": (
                "改变了显存紧张时被抢占的请求",
                "显存紧张时抢占最新的请求，而不是最早的，与文档一致。",
                "长时间运行的请求不再因新来的短请求而重启。",
                "",
                ("高负载下新请求的延迟会上升。",),
                (),
            ),
        },
    ),
    (
        "[Docs] Explain FP8 KV-cache scales",
        "Chen Hao",
        4809,
        ChangeType.DOCS,
        L,
        {
            "en": ("documentation only", "Adds a page on how FP8 KV-cache scales are chosen.", "", "", (), ()),
            "zh": ("仅文档", "新增一页说明 FP8 KV 缓存的缩放系数如何选择。", "", "", (), ()),
        },
    ),
    (
        "[CI] Cache the CUDA toolkit between jobs",
        "Sam Okafor",
        4805,
        ChangeType.CI_BUILD,
        L,
        {
            "en": ("CI only", "Caches the CUDA toolkit download between CI jobs.", "", "", (), ()),
            "zh": ("仅 CI", "在 CI 任务之间缓存 CUDA 工具包下载。", "", "", (), ()),
        },
    ),
]
HEADLINE = {
    "en": (
        "`--swap-space` is gone: launch scripts that pass it fail at start-up.",
        "FP8 decoding about 4% faster on Hopper (fused RMSNorm + quantisation).",
        "The scheduler now preempts the newest request, as documented.",
    ),
    "zh": (
        "`--swap-space` 已删除：仍传该参数的启动脚本会启动失败。",
        "Hopper 上 FP8 解码快约 4%（RMSNorm 与量化融合）。",
        "调度器现在按文档抢占最新的请求。",
    ),
}


def sample_digest(lang: str) -> Digest:
    window = day_window(datetime(2026, 1, 28).date(), "Asia/Shanghai")
    entries = []
    for i, (title, author, pr, kind, level, texts) in enumerate(COMMITS):
        reason, summary, impact, insight, risks, recs = texts[lang]
        sha = hashlib.sha1(title.encode()).hexdigest()
        commit = Commit(
            repo=REPO,
            sha=sha,
            title=title,
            body="",
            author=author,
            committed_at=window.start_utc + timedelta(hours=20 - 3 * i),
            url=f"{URL}/commit/{sha}",
            pr_number=pr,
        )
        analysis = Analysis(
            change_type=kind,
            importance=level,
            importance_reason=reason,
            summary=summary,
            impact=impact,
            insights=Insights(architecture=insight),
            risks=risks,
            recommendations=recs,
            origin="llm",
            model="qwen2.5-coder-32b",
            coverage=Coverage(files_total=3, files_shown=3),
        )
        entries.append(DigestEntry(commit=commit, analysis=analysis))
    return Digest(
        repo=REPO,
        branch="main",
        window=window,
        lang=lang,
        entries=tuple(entries),
        headline=HEADLINE[lang],
        headline_origin="llm",
        repo_url=URL,
        generated_at=datetime(2026, 1, 29, 1, 30, tzinfo=UTC),
        repo_spec=REPO,
        cost=Cost(tokens_in=18_402, tokens_out=2_117, calls=6, analyses=5, money=0.0040),
    )


def messages(lang: str):
    plan = Plan(digest=sample_digest(lang), min_importance="low", attach_report=False)
    return parent_content(plan, REPORT), thread_contents(plan, REPORT)


# --- Slack ----------------------------------------------------------------------------------------


def mrkdwn(text: str) -> str:
    """Slack mrkdwn (already escaped by the renderer: &amp; &lt; &gt;) as HTML."""
    links: list[str] = []

    def keep_link(m: re.Match) -> str:
        links.append(f'<a href="#">{m.group(2)}</a>')
        return f"\x00{len(links) - 1}\x00"

    text = re.sub(r"<([^|>]+)\|([^>]+)>", keep_link, text)
    text = text.replace('"', "&quot;")
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", r"<b>\1</b>", text)
    text = re.sub(r"\x00(\d+)\x00", lambda m: mrkdwn_link(links[int(m.group(1))]), text)
    return text.replace("\n", "<br>")


def mrkdwn_link(anchor: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", anchor)


def slack_blocks(blocks: list[dict]) -> str:
    out = []
    for b in blocks:
        kind = b["type"]
        if kind == "header":
            out.append(f'<div class="s-header">{html.escape(b["text"]["text"])}</div>')
        elif kind == "section":
            out.append(f'<div class="s-section">{mrkdwn(b["text"]["text"])}</div>')
        elif kind == "context":
            out.append('<div class="s-context">' + " ".join(mrkdwn(e["text"]) for e in b["elements"]) + "</div>")
        elif kind == "divider":
            out.append("<hr>")
        elif kind == "actions":
            buttons = []
            for e in b["elements"]:
                label = e.get("text", {}).get("text") or e.get("placeholder", {}).get("text", "…")
                style = " primary" if e.get("style") == "primary" else ""
                select = " ▾" if e["type"] != "button" else ""
                buttons.append(f'<span class="s-button{style}">{html.escape(label)}{select}</span>')
            out.append('<div class="s-actions">' + "".join(buttons) + "</div>")
    return "\n".join(out)


def slack_message(payloads: list[dict], when: str, replies: int = 0) -> str:
    body = "\n".join(slack_blocks(p["blocks"]) for p in payloads)
    tail = f'<div class="s-replies">💬 {replies} replies</div>' if replies else ""
    return f"""<div class="s-msg"><div class="avatar">📰</div><div class="s-body">
<div class="s-name">Digest Bot <span class="app">APP</span> <span class="time">{when}</span></div>
{body}{tail}</div></div>"""


SLACK_CSS = """
body { margin: 0; font: 15px/1.45 'Noto Sans', 'DejaVu Sans', 'WenQuanYi Micro Hei', 'Noto Color Emoji', sans-serif; color: #1d1c1d; background: #fff; }
#shot { display: flex; width: 1240px; border: 1px solid #ddd; }
.sidebar { width: 170px; background: #3f0e40; color: #cfc3cf; padding: 14px 12px; font-size: 14px; }
.sidebar b { color: #fff; display: block; margin-bottom: 14px; font-size: 16px; }
.sidebar .on { background: #1164a3; color: #fff; border-radius: 4px; padding: 2px 6px; margin: 0 -6px; }
.pane { flex: 1; border-right: 1px solid #ddd; min-width: 0; }
.thread { width: 520px; }
.bar { border-bottom: 1px solid #ddd; padding: 10px 18px; font-weight: 700; font-size: 16px; }
.bar small { font-weight: 400; color: #616061; }
.s-msg { display: flex; gap: 10px; padding: 10px 18px; }
.avatar { width: 36px; height: 36px; border-radius: 6px; background: #e8f0fe; font-size: 22px; text-align: center; line-height: 36px; flex: none; }
.s-body { min-width: 0; }
.s-name { font-weight: 800; } .app { background: #eee; color: #616061; font-size: 10px; padding: 1px 3px; border-radius: 2px; font-weight: 700; }
.time { color: #616061; font-weight: 400; font-size: 12px; }
.s-header { font-size: 18px; font-weight: 800; margin: 4px 0; }
.s-section { margin: 4px 0; } .s-context { color: #616061; font-size: 13px; margin: 4px 0; }
code { background: #f6f6f6; border: 1px solid #e0e0e0; border-radius: 3px; color: #c01343; font-size: 12.5px; padding: 0 3px; }
a { color: #1264a3; text-decoration: none; } a code { color: #1264a3; }
.s-actions { margin: 8px 0 2px; display: flex; gap: 8px; flex-wrap: wrap; }
.s-button { border: 1px solid #bbb; border-radius: 4px; padding: 3px 11px; font-weight: 700; font-size: 13px; }
.s-button.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
.s-replies { color: #1264a3; font-weight: 700; font-size: 13px; margin-top: 6px; }
"""


def slack_page() -> str:
    parent, thread = messages("en")
    first = slack_message(slack.render(parent), "09:30", replies=len(thread))
    reply = slack_message(slack.render(thread[0], thread="1769563800.000100"), "09:30")
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>{SLACK_CSS}</style></head><body>
<div id="shot"><div class="sidebar"><b>acme</b>Channels<br># general<br><span class="on"># engine-digest</span><br># random</div>
<div class="pane"><div class="bar"># engine-digest</div>{first}</div>
<div class="pane thread"><div class="bar">Thread <small># engine-digest</small></div>{reply}</div></div></body></html>"""


# --- Feishu ---------------------------------------------------------------------------------------

TAG_COLOURS = {"red": "#f54a45", "orange": "#ff8800", "green": "#34c724", "neutral": "#8f959e", "blue": "#3370ff"}
HEADER_COLOURS = {"red": "#fde2e2", "orange": "#feead2", "green": "#d9f5d6", "blue": "#e1eaff", "grey": "#eff0f1"}


def lark_md(text: str) -> str:
    """Feishu card Markdown (numeric escapes for < > &, `<font color>` for grey) as HTML."""
    parts = re.split(r"(<font color='\w+'>|</font>)", text)
    out = []
    for part in parts:
        if part.startswith("<font"):
            out.append('<span class="grey">')
        elif part == "</font>":
            out.append("</span>")
        else:
            part = part.replace("<", "&lt;").replace(">", "&gt;")
            part = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="#">\1</a>', part)
            part = re.sub(r"`([^`]+)`", r"<code>\1</code>", part)
            part = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", part)
            part = re.sub(r"(?m)^- ", "• ", part)
            out.append(part)
    return "".join(out).replace("\n", "<br>")


def lark_elements(elements: list[dict]) -> str:
    out = []
    for e in elements:
        tag = e["tag"]
        if tag == "markdown":
            out.append(f'<div class="f-md">{lark_md(e["content"])}</div>')
        elif tag == "hr":
            out.append("<hr>")
        elif tag == "collapsible_panel":
            title = lark_md(e["header"]["title"]["content"])
            inner = lark_elements(e["elements"]) if e.get("expanded") else ""
            out.append(
                f'<div class="f-panel"><div class="f-panel-h"><span>{title}</span><span>⌄</span></div>{inner}</div>'
            )
        elif tag == "column_set":
            inner = "".join(lark_elements(c["elements"]) for c in e["columns"])
            out.append(f'<div class="f-row">{inner}</div>')
        elif tag == "button":
            kind = " primary" if e.get("type") == "primary" else ""
            out.append(f'<span class="f-button{kind}">{html.escape(e["text"]["content"])}</span>')
        elif tag == "select_static":
            out.append(f'<span class="f-button">{html.escape(e.get("placeholder", {}).get("content", "…"))} ⌄</span>')
    return "\n".join(out)


def lark_card(card: dict) -> str:
    head = card.get("header") or {}
    top = ""
    if head:
        tags = "".join(
            f'<span class="f-tag" style="color:{TAG_COLOURS.get(t["color"], "#646a73")};'
            f'border-color:{TAG_COLOURS.get(t["color"], "#646a73")}">{html.escape(t["text"]["content"])}</span>'
            for t in head.get("text_tag_list", [])
        )
        subtitle = html.escape(head.get("subtitle", {}).get("content", ""))
        top = (
            f'<div class="f-head" style="background:{HEADER_COLOURS.get(head.get("template"), "#eff0f1")}">'
            f'<div class="f-title">{html.escape(head["title"]["content"])} {tags}</div>'
            f'<div class="f-sub">{subtitle}</div></div>'
        )
    return f'<div class="f-card">{top}<div class="f-bodyc">{lark_elements(card["body"]["elements"])}</div></div>'


def lark_message(cards: list[dict], when: str) -> str:
    body = "".join(lark_card(c) for c in cards)
    return f"""<div class="f-msg"><div class="f-avatar">📰</div><div class="f-main">
<div class="f-name">Digest Bot <span class="f-bot">机器人</span> <span class="time">{when}</span></div>{body}</div></div>"""


FEISHU_CSS = """
body { margin: 0; font: 14px/1.55 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', 'DejaVu Sans', 'Noto Color Emoji', sans-serif; color: #1f2329; background: #fff; }
#shot { display: flex; width: 1240px; border: 1px solid #dee0e3; background: #f5f6f7; }
.col { flex: 1; min-width: 0; border-right: 1px solid #dee0e3; }
.bar { background: #fff; border-bottom: 1px solid #dee0e3; padding: 10px 18px; font-weight: 600; font-size: 16px; }
.bar small { color: #8f959e; font-weight: 400; }
.f-msg { display: flex; gap: 10px; padding: 12px 18px; }
.f-avatar { width: 36px; height: 36px; border-radius: 50%; background: #e1eaff; text-align: center; line-height: 36px; font-size: 20px; flex: none; }
.f-main { min-width: 0; flex: 1; max-width: 560px; }
.f-name { color: #646a73; font-size: 13px; margin-bottom: 4px; }
.f-bot { background: #e1eaff; color: #3370ff; font-size: 11px; padding: 0 4px; border-radius: 3px; }
.time { color: #8f959e; font-size: 12px; }
.f-card { background: #fff; border: 1px solid #dee0e3; border-radius: 8px; overflow: hidden; margin-bottom: 8px; }
.f-head { padding: 12px 14px 10px; }
.f-title { font-weight: 600; font-size: 16px; }
.f-sub { color: #646a73; font-size: 12.5px; }
.f-tag { border: 1px solid; border-radius: 4px; font-size: 12px; padding: 0 5px; margin-left: 4px; font-weight: 400; background: #fff; }
.f-bodyc { padding: 10px 14px 12px; }
.f-md { margin: 5px 0; } .grey { color: #8f959e; }
code { background: #f2f3f5; border-radius: 3px; font-size: 12.5px; padding: 0 3px; }
a { color: #3370ff; text-decoration: none; }
hr { border: 0; border-top: 1px solid #dee0e3; margin: 10px 0; }
.f-panel { border: 1px solid #dee0e3; border-radius: 5px; padding: 6px 8px; margin: 6px 0; }
.f-panel-h { display: flex; justify-content: space-between; } .f-panel-h span { color: #8f959e; }
.f-row { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 2px; }
.f-button { border: 1px solid #d0d3d6; border-radius: 6px; padding: 3px 12px; font-size: 13px; background: #fff; }
.f-button.primary { background: #3370ff; border-color: #3370ff; color: #fff; }
"""


def feishu_page() -> str:
    parent, thread = messages("zh")
    first = lark_message(feishu.render_cards(parent, lang="zh"), "09:30")
    reply = lark_message(feishu.render_cards(thread[0], thread="om_parent", lang="zh"), "09:30")
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>{FEISHU_CSS}</style></head><body>
<div id="shot"><div class="col"><div class="bar">引擎日报 <small>群聊</small></div>{first}</div>
<div class="col"><div class="bar">话题 <small>{len(thread)} 条回复</small></div>{reply}</div></div></body></html>"""


# --- photographs ----------------------------------------------------------------------------------


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).exists():
        raise SystemExit("no Chromium: set CHROMIUM=/path/to/chromium (no browser is downloaded)")
    return found


def photograph(pages: dict[str, str], out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1260, "height": 900}, device_scale_factor=1)
        for name, markup in pages.items():
            page.set_content(markup)
            page.locator("#shot").screenshot(path=str(out / name))
            print(f"wrote {(out / name).relative_to(ROOT) if (out / name).is_relative_to(ROOT) else out / name}")
        browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--html", type=Path, help="also write the HTML mocks to this folder")
    args = parser.parse_args(argv)
    pages = {"digest-slack.png": slack_page(), "digest-feishu.png": feishu_page()}
    if args.html:
        args.html.mkdir(parents=True, exist_ok=True)
        for name, markup in pages.items():
            (args.html / name.replace(".png", ".html")).write_text(markup, encoding="utf-8")
    args.out.mkdir(parents=True, exist_ok=True)
    photograph(pages, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
