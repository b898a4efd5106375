"""Every link in the pages lands: the file exists and, for `page.md#anchor`, the page has that heading (issue 35 #1).

Anchors follow GitHub's rule for headings: lower case, markup and punctuation dropped (hyphens and underscores kept),
each space a hyphen, and a repeated heading gets -1, -2, ... in order.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "resources" / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]*)\)")


def github_anchor(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps only its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w keeps letters, digits, underscore (unicode too, as GitHub does)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # a '#' line in a fenced block is no heading
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = github_anchor(heading)
        n = seen.get(slug, 0)
        out.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    text = page.read_text()
    body = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    body = re.sub(r"`[^`\n]*`", "", body)  # code spans are not links
    broken = []
    for target in LINK.findall(body):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path) if path else page
        if not dest.exists():
            broken.append(f"{page.relative_to(root)} -> {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            broken.append(f"{page.relative_to(root)} -> {target} (no such heading)")
    return broken


def test_github_anchor_rule():
    assert github_anchor("Another CPU: `--isa`") == "another-cpu---isa"
    assert github_anchor("What `tuned` means (and why)") == "what-tuned-means-and-why"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n## A\n") == {"a", "a-1", "a-2"}


def test_a_wrong_anchor_is_reported(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Top\n\n## Another CPU: `--isa`\n\n[ok](#another-cpu---isa) [bad](#another-cpu-isa)\n")
    (tmp_path / "q.md").write_text("# Q\n")
    page.write_text(page.read_text() + "[file](q.md#q) [gone](r.md) [bad2](q.md#nope) `[code](x.md)`\n")
    assert broken_links(page, tmp_path) == [
        "p.md -> #another-cpu-isa (no such heading)",
        "p.md -> r.md (no such file)",
        "p.md -> q.md#nope (no such heading)",
    ]


def test_every_link_and_anchor_in_the_pages_lands():
    broken = [b for page in PAGES for b in broken_links(page)]
    assert not broken, "\n".join(broken)
