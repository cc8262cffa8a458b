#!/usr/bin/env python3
"""Check the prose pages, README.md, CHANGELOG.md and docs/*.md, against a database with the demo data.

    createdb geoacc_pages && psql -d geoacc_pages -f test/demo.sql
    PGDATABASE=geoacc_pages scripts/check_pages.py

Run from anywhere; PGHOST, PGPORT, PGUSER and PGDATABASE name the database, which must hold the demo data
(test/demo.sql loaded: ais_fixes, ais_tracks, terrain). It reports a line per problem, as file:line, and exits
with status 1 unless:

  - every ```sql block of these pages, except docs/reference.md's (scripts/check_reference.py runs its
    examples), runs without error, each in a session of its own, in a transaction that is rolled back;
  - a ```text block right after an ```sql block (nothing but blank lines between) is what psql prints for it:
    aligned, without the row count, trailing spaces and blank lines at either end ignored, as
    check_reference.py compares. A block whose output depends on the machine has no ```text block after it;
  - every relative link of README.md, CHANGELOG.md and docs/*.md (docs/reference.md included) leads to a file
    that exists, and every #anchor to a heading of its Markdown page, as GitHub makes anchors.

Words after `sql` in a block's info string:

  raster           the block needs geoacc_raster: its transaction creates the extension when the database
                   lacks it, and the block is skipped when postgis_raster is not available;
  skip-gpu         not run: it needs a GPU;
  skip-citus       not run: it needs a Citus cluster;
  skip-preloaded   not run: it needs geoacc in shared_preload_libraries (or changes the server's settings);
  skip-file        not run: it reads or writes a file on disk.

Only python3 and psql are needed (psql from PATH, or from PG_CONFIG's bindir).
"""

import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIPS = ('skip-gpu', 'skip-citus', 'skip-preloaded', 'skip-file')

problems = []


def problem(message):
    problems.append(message)
    print('check_pages: ' + message)


def rel(path):
    return os.path.relpath(path, ROOT)


# ------------------------------------------------------------ pages

class Block:
    def __init__(self, info, lines, start):
        self.info = info.split()        # ['sql', 'skip-gpu']
        self.lines = lines
        self.start = start              # line number of the opening fence, from 1
        self.output = None              # the ```text block right after an ```sql block


FENCE = re.compile(r'^(\s*)(`{3,}|~{3,})\s*(.*)$')


def fence_match(line):
    """A fence line as a match of (indent, fence, info), or None (after backticks, no backtick in the info)."""
    m = FENCE.match(line)
    if m and m.group(2)[0] == '`' and '`' in m.group(3):
        return None
    return m


def read_blocks(path):
    """The fenced code blocks of a Markdown page (fences may be indented, as in list items)."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    blocks = []
    last = None                         # the last ```sql block, while only blank lines follow it
    i = 0
    while i < len(lines):
        m = fence_match(lines[i])
        if not m:
            if lines[i].strip():
                last = None
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3)
        body = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and not lines[j].strip().strip(fence[0])):
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        block = Block(info, body, i + 1)
        if block.info[:1] == ['text'] and last is not None:
            last.output = block
            last = None
        else:
            blocks.append(block)
            last = block if block.info[:1] == ['sql'] else None
        i = j + 1
    return blocks


def github_anchor(heading):
    """The anchor GitHub gives a heading (as check_reference.py makes it): links by their text, lower case,
    punctuation other than - and _ dropped, spaces as -."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading.strip())
    text = re.sub(r'<[^>]+>', '', text)
    text = re.sub(r'[`*]', '', text).lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


anchor_cache = {}


def markdown_anchors(path):
    """The anchors of the headings of a Markdown page (a repeated one gets -1, -2, ...)."""
    if path not in anchor_cache:
        anchors = set()
        count = {}
        fence = None
        with open(path, encoding='utf-8') as f:
            for line in f:
                m = fence_match(line)
                if m:
                    if fence is None:
                        fence = m.group(2)
                    elif line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                        fence = None
                    continue
                heading = None if fence else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
                if heading:
                    anchor = github_anchor(heading.group(1))
                    n = count.get(anchor, 0)
                    count[anchor] = n + 1
                    anchors.add(anchor if n == 0 else '%s-%d' % (anchor, n))
        anchor_cache[path] = anchors
    return anchor_cache[path]


LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')


def check_links(path):
    """Every relative link of the page leads to a file, and every #anchor to a heading of that page."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    links = 0
    fence = None
    for number, line in enumerate(lines, 1):
        m = fence_match(line)
        if m:
            if fence is None:
                fence = m.group(2)
            elif line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if fence:
            continue
        text = re.sub(r'(`+)(?:(?!\1).)+\1', lambda c: ' ' * len(c.group(0)), line)    # not in code spans
        for link in LINK.finditer(text):
            target = link.group(1)
            if not target or re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                continue                # an absolute URL, mailto:
            links += 1
            file_part, _, anchor = target.partition('#')
            where = '%s:%d' % (rel(path), number)
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problem('%s: link to %s, which does not exist' % (where, file_part))
                continue
            if anchor and dest.endswith('.md') and anchor not in markdown_anchors(dest):
                problem('%s: link to %s#%s, which is no heading there' % (where, rel(dest), anchor))
    return links


# ------------------------------------------------------------ psql

def psql_command():
    pg_config = os.environ.get('PG_CONFIG', 'pg_config')
    try:
        bindir = subprocess.run([pg_config, '--bindir'], capture_output=True, text=True,
                                check=True).stdout.strip()
        psql = os.path.join(bindir, 'psql')
        if os.path.exists(psql):
            return psql
    except (OSError, subprocess.CalledProcessError):
        pass
    return 'psql'


def run(psql, sql, extra=('-P', 'footer=off')):
    """Run SQL text through psql in a session of its own: (exit status, stdout, stderr)."""
    p = subprocess.run([psql, '-X', '-q', '-v', 'ON_ERROR_STOP=1'] + list(extra), input=sql,
                       capture_output=True, text=True, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def scalar(psql, sql):
    rc, out, err = run(psql, sql, extra=('-A', '-t'))
    if rc != 0:
        raise RuntimeError(err.strip())
    return out.strip()


def normalize_output(text):
    lines = [line.rstrip() for line in text.split('\n')]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return '\n'.join(lines)


def check_blocks(psql, path, raster):
    """Run the page's ```sql blocks; compare the output where a ```text block shows it."""
    ran = 0
    skipped = {}
    for block in read_blocks(path):
        if block.info[:1] != ['sql']:
            continue
        where = '%s:%d' % (rel(path), block.start)
        marks = block.info[1:]
        skip = [m for m in marks if m in SKIPS]
        unknown = [m for m in marks if m not in SKIPS and m != 'raster']
        if unknown:
            problem('%s: unknown mark %s (known: raster, %s)' % (where, ' '.join(unknown), ', '.join(SKIPS)))
            continue
        if skip or ('raster' in marks and raster is None):
            reason = skip[0] if skip else 'raster (postgis_raster not available)'
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        prelude = "BEGIN;\nSET LOCAL statement_timeout = '60s';\n"
        if 'raster' in marks and raster == 'create':
            prelude += ("SET LOCAL client_min_messages = warning;\n"
                        "CREATE EXTENSION IF NOT EXISTS geoacc_raster CASCADE;\n"
                        "SET LOCAL client_min_messages = notice;\n")
        rc, out, err = run(psql, prelude + '\n'.join(block.lines) + '\nROLLBACK;\n')
        ran += 1
        if rc != 0:
            problem('%s: the block fails:\n%s' % (where, err.strip()))
        elif block.output is not None and normalize_output(out) != normalize_output('\n'.join(block.output.lines)):
            problem('%s: the block prints\n%s\nand not what its ```text block (line %d) shows'
                    % (where, out.rstrip(), block.output.start))
    return ran, skipped


def main():
    pages = [os.path.join(ROOT, 'README.md'), os.path.join(ROOT, 'CHANGELOG.md')] + \
        sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))
    reference = os.path.join(ROOT, 'docs', 'reference.md')
    started = time.time()

    links = sum(check_links(page) for page in pages)

    psql = psql_command()
    try:
        if scalar(psql, "SELECT to_regclass('ais_tracks') IS NOT NULL AND to_regclass('terrain') IS NOT NULL"
                        " AND to_regclass('ais_fixes') IS NOT NULL;") != 't':
            problem('the database lacks the demo data: load it with psql -f test/demo.sql from the repository root')
            return 1
        if scalar(psql, "SELECT count(*) FROM pg_extension WHERE extname = 'geoacc_raster';") == '1':
            raster = 'installed'
        elif scalar(psql, "SELECT count(*) FROM pg_available_extensions WHERE name = 'postgis_raster';") == '1':
            raster = 'create'
        else:
            raster = None
    except RuntimeError as e:
        problem('cannot query the database: %s' % e)
        return 1

    ran = 0
    skipped = {}
    for page in pages:
        if page == reference:
            continue
        n, s = check_blocks(psql, page, raster)
        ran += n
        for reason, count in s.items():
            skipped[reason] = skipped.get(reason, 0) + count

    print('check_pages: %d pages, %d links, %d sql blocks ran%s in %.1f s: %s' % (
        len(pages), links, ran,
        ' (%d skipped: %s)' % (sum(skipped.values()),
                               ', '.join('%d %s' % (c, r) for r, c in sorted(skipped.items()))) if skipped else '',
        time.time() - started,
        '%d problems' % len(problems) if problems else 'all pass'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
