#!/usr/bin/env python3
"""Check docs/reference.md against an installed geoacc and against the C sources.

    PGHOST=/tmp PGPORT=5432 PGUSER=postgres scripts/check_reference.py

It makes a scratch database (--database, default geoacc_reference_check; replaced, and dropped at the end) with
geoacc and, where postgis_raster is available, geoacc_raster, and reports a line per problem (exit status 1)
unless:

  - every function, aggregate and type of both extensions, and every geoacc.* setting, has its synopsis line in
    the reference (```sql synopsis blocks), written as the catalog prints it, and every synopsis line names one
    of them;
  - the summary quoted (>) after a synopsis block is the COMMENT ON text of each object of the block, byte for
    byte (for a setting: its short description, then its long one);
  - every entry (### heading) has an example; every example (```sql example) runs without error in a transaction
    that is rolled back, and prints what the ```text output block right after it shows, when it has one;
  - every error listed (a table row `SQLSTATE` | `message`) is raised in src/*.c (ereport) or by the core
    (src/device.c passes its messages on), with that SQLSTATE and a message of that format, and every ERROR of
    src/*.c is listed;
  - the README's links into the reference lead to entries, and every entry is linked from the README.

Only python3 and psql are needed (psql from PATH, or from PG_CONFIG's bindir).
"""

import argparse
import codecs
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

problems = []


def problem(message):
    problems.append(message)
    print('check_reference: ' + message)


# ------------------------------------------------------------------ psql

class Psql:
    def __init__(self, psql, database):
        self.psql = psql
        self.database = database

    def run(self, sql, database=None, extra=()):
        """Run SQL text through psql; (exit status, stdout, stderr)."""
        cmd = [self.psql, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', database or self.database] + list(extra)
        p = subprocess.run(cmd, input=sql, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr


def query(db, sql, prelude=''):
    """The rows of a query as dicts (NULL as None), read as JSON; `prelude` runs before it in the same session."""
    rc, out, err = db.run("%s\nSELECT coalesce(json_agg(q), '[]') FROM (%s) AS q;\n" % (prelude, sql),
                          extra=['-A', '-t'])
    if rc != 0:
        raise RuntimeError('query failed: %s\n%s' % (sql.strip(), err.strip()))
    return json.loads(out)


# ------------------------------------------------------- the catalog

FUNCTIONS_SQL = """
SELECT e.extname AS extension, 'function ' || p.oid::regprocedure::text AS identity,
    quote_ident(p.proname) || '(' || pg_get_function_arguments(p.oid) || ') RETURNS ' || pg_get_function_result(p.oid)
        AS synopsis,
    obj_description(p.oid, 'pg_proc') AS comment
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid
JOIN pg_proc p ON p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
    AND e.extname IN ('geoacc', 'geoacc_raster')
"""

TYPES_SQL = """
SELECT e.extname AS extension, 'type ' || format_type(t.oid, NULL) AS identity,
    'TYPE ' || format_type(t.oid, NULL) || CASE t.typtype WHEN 'b' THEN
        ' (INPUT = ' || t.typinput::text || ', OUTPUT = ' || t.typoutput::text ||
        CASE WHEN t.typreceive <> 0 THEN ', RECEIVE = ' || t.typreceive::text ELSE '' END ||
        CASE WHEN t.typsend <> 0 THEN ', SEND = ' || t.typsend::text ELSE '' END ||
        ', INTERNALLENGTH = ' || CASE WHEN t.typlen < 0 THEN 'VARIABLE' ELSE t.typlen::text END ||
        ', STORAGE = ' || CASE t.typstorage WHEN 'p' THEN 'plain' WHEN 'e' THEN 'external' WHEN 'm' THEN 'main'
            ELSE 'extended' END || ')'
        ELSE '' END AS synopsis,
    obj_description(t.oid, 'pg_type') AS comment
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid
JOIN pg_type t ON t.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.classid = 'pg_type'::regclass AND d.deptype = 'e'
    AND e.extname IN ('geoacc', 'geoacc_raster')
"""

OTHER_MEMBERS_SQL = """
SELECT e.extname AS extension, pg_describe_object(d.classid, d.objid, d.objsubid) AS description
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass)
    AND e.extname IN ('geoacc', 'geoacc_raster')
"""

# the library defines its settings when it is loaded: load it in the same session first
LOAD_LIBRARY = "DO $$ BEGIN PERFORM geoacc_version(); END $$;"
SETTINGS_SQL = """
SELECT 'geoacc' AS extension, 'setting ' || name AS identity,
    name || ' ' || vartype ||
    CASE WHEN vartype = 'enum' THEN ' {' || array_to_string(enumvals, ', ') || '}' ELSE '' END ||
    CASE WHEN vartype IN ('integer', 'real') THEN ' ' || min_val || ' .. ' || max_val ELSE '' END ||
    CASE WHEN unit IS NOT NULL THEN ' ' || unit ELSE '' END ||
    ' DEFAULT ' || CASE WHEN vartype = 'string' THEN quote_literal(boot_val) ELSE boot_val END ||
    ' (context ' || context || ')' AS synopsis,
    short_desc || CASE WHEN extra_desc IS NOT NULL THEN E'\\n\\n' || extra_desc ELSE '' END AS comment
FROM pg_settings
WHERE name LIKE 'geoacc.%'
"""


class CatalogObject:
    def __init__(self, extension, identity, synopsis, comment):
        self.extension = extension
        self.identity = identity        # regprocedure, type or setting name, for messages
        self.synopsis = synopsis        # the line the reference must hold
        self.comment = comment          # None when the object has no COMMENT ON


def read_catalog(db):
    objects = [CatalogObject(**row) for row in query(db, FUNCTIONS_SQL) + query(db, TYPES_SQL)]
    for row in query(db, OTHER_MEMBERS_SQL):
        problem('%s is a member of %s of a kind this check does not know; teach scripts/check_reference.py '
                'to document it' % (row['description'], row['extension']))
    objects += [CatalogObject(**row) for row in query(db, SETTINGS_SQL, prelude=LOAD_LIBRARY)]
    return objects


# ----------------------------------------------------- the reference

class Block:
    def __init__(self, info, lines, start):
        self.info = info.split()        # the info string's words: ['sql', 'synopsis']
        self.lines = lines
        self.start = start              # line number of the opening fence, from 1
        self.quote = None               # the blockquote that follows (a synopsis block's summary)
        self.output = None              # the ```text output block that follows (an example's output)


class Entry:
    def __init__(self, title, anchor, level, start):
        self.title = title
        self.level = level              # 3 for an entry; 1 or 2 for the sections around the entries
        self.anchor = anchor
        self.start = start
        self.blocks = []
        self.errors = []                # (line number, SQLSTATE, message)


def github_anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation other than - and _ dropped, spaces as -."""
    text = re.sub(r'[`*]', '', heading.strip()).lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


ERROR_ROW = re.compile(r'^\|\s*`([0-9A-Z]{5})`\s*\|\s*`([^`]+)`\s*\|')


def parse_reference(path):
    """The entries (### headings) of the reference, and its sections above them as one entry each."""
    name = os.path.relpath(path, ROOT)
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    entries = []
    current = Entry('(top)', '', 0, 1)
    entries.append(current)
    last_block = None               # the last code block, while only blank lines or a quote follow it
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r'^(```+)\s*(.*)$', line)
        if fence:
            info = fence.group(2)
            body = []
            j = i + 1
            while j < len(lines) and not lines[j].startswith(fence.group(1)):
                body.append(lines[j])
                j += 1
            block = Block(info, body, i + 1)
            if block.info[:2] == ['text', 'output']:
                if last_block is None or last_block.info[:2] != ['sql', 'example'] or last_block.output is not None:
                    problem('%s:%d: an output block must follow an example block' % (name, i + 1))
                else:
                    last_block.output = block
            else:
                current.blocks.append(block)
            last_block = block
            i = j + 1
            continue
        heading = re.match(r'^(#{1,6})\s+(.*?)\s*$', line)
        if heading:
            anchor = github_anchor(heading.group(2))
            if len(heading.group(1)) <= 3:
                current = Entry(heading.group(2).replace('`', ''), anchor, len(heading.group(1)), i + 1)
                entries.append(current)
            last_block = None
            i += 1
            continue
        if line.startswith('>') and last_block is not None and last_block.info[:2] == ['sql', 'synopsis'] \
                and last_block.quote is None:
            quote = []
            while i < len(lines) and lines[i].startswith('>'):
                quote.append(re.sub(r'^> ?', '', lines[i]))
                i += 1
            last_block.quote = '\n'.join(quote)
            last_block = None
            continue
        row = ERROR_ROW.match(line)
        if row:
            current.errors.append((i + 1, row.group(1), row.group(2).replace('\\|', '|')))
        if line.strip():
            last_block = None
        i += 1
    return entries


# ---------------------------------------------------- the C sources

def strip_comments(text):
    """C source without comments, string and character literals kept."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(' ' + '\n' * text.count('\n', i, j))     # lines keep their numbers
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def call_end(text, open_paren):
    """Index of the parenthesis closing the one at open_paren."""
    depth = 0
    i = open_paren
    while i < len(text):
        c = text[i]
        if c in '"\'':
            j = i + 1
            while text[j] != c:
                j += 2 if text[j] == '\\' else 1
            i = j + 1
            continue
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError('unbalanced parentheses')


# format macros of PostgreSQL and the C library, as the conversions they stand for
FORMAT_MACROS = {'INT64_FORMAT': '%lld', 'UINT64_FORMAT': '%llu'}
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|([A-Z][A-Z0-9_]*)')


def c_unescape(literal):
    """The text of a C string literal's body (escapes such as \\" and \\n resolved; UTF-8 kept)."""
    return codecs.escape_decode(literal.encode('utf-8'))[0].decode('utf-8')


def c_format(text, pos, defines):
    """The format string that starts at pos (adjacent literals and format macros), or None."""
    parts = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        m = LITERAL.match(text, pos)
        if not m:
            break
        if m.group(1) is not None:
            parts.append(c_unescape(m.group(1)))
        elif m.group(2) in FORMAT_MACROS:
            parts.append(FORMAT_MACROS[m.group(2)])
        elif m.group(2) in defines:
            parts.append(defines[m.group(2)])
        else:
            break
        pos = m.end()
    return ''.join(parts) if parts else None


CONVERSION = re.compile(r'%(?:%|[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcsp]))')


def format_regex(fmt):
    """A regular expression matching what fmt can print, and the reference's own placeholders."""
    out = []
    pos = 0
    for m in CONVERSION.finditer(fmt):
        out.append(re.escape(fmt[pos:m.start()]))
        out.append('%' if m.group(0) == '%%' else '.+?')
        pos = m.end()
    out.append(re.escape(fmt[pos:]))
    return re.compile('^' + ''.join(out) + '$', re.S)


def read_errcodes(pg_config):
    """ERRCODE_ macro -> SQLSTATE, from the server's utils/errcodes.h."""
    include = subprocess.run([pg_config, '--includedir-server'], capture_output=True, text=True, check=True)
    codes = {}
    with open(os.path.join(include.stdout.strip(), 'utils', 'errcodes.h')) as f:
        for m in re.finditer(r"#define (ERRCODE_\w+) MAKE_SQLSTATE\('(.)','(.)','(.)','(.)','(.)'\)", f.read()):
            codes[m.group(1)] = ''.join(m.group(2, 3, 4, 5, 6))
    return codes


def source_errors(errcodes):
    """The ERRORs the sources raise: a list of (SQLSTATE, format, where) and the core's under GeoaccCheck."""
    raised = []
    core_status_codes = {}          # core status -> SQLSTATE, where GeoaccCheck passes the core's message on
    src = os.path.join(ROOT, 'src')
    for name in sorted(os.listdir(src)):
        if not name.endswith('.c'):
            continue
        path = os.path.join(src, name)
        with open(path, encoding='utf-8') as f:
            text = strip_comments(f.read())
        defines = {m.group(1): c_unescape(m.group(2))
                   for m in re.finditer(r'#define\s+(\w+)\s+"((?:[^"\\]|\\.)*)"', text)}
        for m in re.finditer(r'\bereport\s*\(\s*ERROR\s*,', text):
            end = call_end(text, text.index('(', m.start()))
            call = text[m.start():end]
            where = '%s:%d' % (os.path.relpath(path, ROOT), text.count('\n', 0, m.start()) + 1)
            function = re.findall(r'^(\w+)\(', text[:m.start()], re.M)
            if function and function[-1].startswith('geoacc_test_'):
                continue            # test support, declared only by the test suites
            codes = set()
            for c in re.finditer(r'\berrcode\s*\(\s*([^()]+?)\s*\)', call):
                if c.group(1) in errcodes:
                    codes.add(errcodes[c.group(1)])
                elif c.group(1).startswith('ERRCODE_'):
                    problem('%s: %s is not an SQLSTATE of utils/errcodes.h' % (where, c.group(1)))
                else:
                    codes.add('*')      # chosen by the caller: any SQLSTATE the reference gives
            fmts = []
            for e in re.finditer(r'\berrmsg\s*\(', call):
                fmt = c_format(call, e.end(), defines)
                if fmt is None:
                    problem('%s: the message of an ereport is not a string literal' % where)
                else:
                    fmts.append(fmt)
            for code in codes:
                for fmt in fmts:
                    raised.append((code, fmt, where))
        # GeoaccCheck's cases that pass the core's message on as the primary message
        body = re.search(r'\nGeoaccCheck\s*\(GeoaccStatus status\)\s*\{', text)
        if body:
            function = text[body.end():]
            function = function[:function.find('\n}')]
            cases = re.finditer(r'case\s+(GEOACC_ERR_\w+)\s*:(.*?)(?=case\s+GEOACC_|default\s*:|$)', function, re.S)
            for case in cases:
                code = re.search(r'\berrcode\s*\(\s*(\w+)\s*\)', case.group(2))
                if code and re.search(r'\berrmsg\s*\(\s*"%s"\s*,\s*message\s*\)', case.group(2)):
                    core_status_codes[case.group(1)] = errcodes.get(code.group(1))
    cuda = os.path.join(ROOT, 'cuda')
    for name in sorted(os.listdir(cuda)):
        if not name.endswith(('.cpp', '.cu', '.cuh')):
            continue
        path = os.path.join(cuda, name)
        with open(path, encoding='utf-8') as f:
            text = strip_comments(f.read())
        for m in re.finditer(r'\bfail\s*\(\s*(GEOACC_ERR_\w+)\s*,', text):
            if m.group(1) not in core_status_codes:
                continue
            fmt = c_format(text, m.end(), {})
            where = '%s:%d' % (os.path.relpath(path, ROOT), text.count('\n', 0, m.start()) + 1)
            if fmt is None:
                problem('%s: the message of a core failure is not a string literal' % where)
                continue
            raised.append((core_status_codes[m.group(1)], fmt, where))
    return raised


def check_errors(entries, raised, reference):
    """Every listed error is raised; every ERROR of src/ is listed."""
    patterns = [(code, fmt, where, format_regex(fmt)) for code, fmt, where in raised
                if CONVERSION.sub('', fmt).strip()]     # a bare "%s" says nothing to match
    listed = [(entry, line, code, message) for entry in entries for line, code, message in entry.errors]
    for entry, line, code, message in listed:
        if not any(c in (code, '*') and rx.match(message) for c, fmt, where, rx in patterns):
            problem('%s:%d: error %s "%s" is not raised with that SQLSTATE and message in src/ or cuda/'
                    % (reference, line, code, message))
    for code, fmt, where, rx in patterns:
        if not where.startswith('src/'):
            continue
        if not any(code in (c, '*') and rx.match(message) for entry, line, c, message in listed):
            problem('%s: error %s "%s" is not listed in the reference' % (where, code, fmt))


# ------------------------------------------------------------ checks

# what Markdown would not show as written: code spans, escapes, inline links, HTML, entities, and * or _ that
# can open or close emphasis (not between letters, not followed or preceded by a space)
MARKDOWN_SPECIAL = re.compile(r'[`\\]|\]\(|<[A-Za-z/!]|&\w+;|(?:^|[\s(])[*_](?=\S)|(?<=\S)[*_](?=$|[\s).,;:])')


def block_extension(block):
    """The extension a synopsis block documents: geoacc_raster when its info string says so."""
    return 'geoacc_raster' if 'geoacc_raster' in block.info[2:] else 'geoacc'


def geoacc_preloaded(db):
    libraries = query(db, "SELECT current_setting('shared_preload_libraries') AS libraries")[0]['libraries']
    return re.search(r'(^|[\s,/])geoacc($|[\s,])', libraries) is not None


def check_synopses(entries, catalog, installed, reference, preloaded):
    by_synopsis = {}
    for obj in catalog:
        by_synopsis.setdefault(obj.synopsis, []).append(obj)
    seen = {}
    for entry in entries:
        for block in entry.blocks:
            if block.info[:2] != ['sql', 'synopsis'] or block_extension(block) not in installed:
                continue
            # the settings of the server's start exist only with geoacc preloaded
            if 'preloaded' in block.info[2:] and not preloaded:
                for line in block.lines:
                    seen.setdefault(line, '%s:%d' % (reference, block.start))
                continue
            objects = []
            for k, line in enumerate(block.lines):
                where = '%s:%d' % (reference, block.start + 1 + k)
                if not line.strip():
                    continue
                if line in seen:
                    problem('%s: synopsis "%s" is already listed at %s' % (where, line, seen[line]))
                    continue
                seen[line] = where
                if line not in by_synopsis:
                    problem('%s: synopsis "%s" is not in the catalog of %s' % (where, line, block_extension(block)))
                    continue
                for obj in by_synopsis[line]:
                    if obj.extension != block_extension(block):
                        problem('%s: %s belongs to %s, but its block is marked as %s\'s' % (
                            where, obj.identity, obj.extension, block_extension(block)))
                objects.extend(by_synopsis[line])
            where = '%s:%d' % (reference, block.start)
            if block.quote is None:
                problem('%s: the synopsis block has no summary (a > quote after it)' % where)
                continue
            for obj in objects:
                if obj.comment is None:
                    problem('%s: %s has no COMMENT ON' % (where, obj.identity))
                elif obj.comment != block.quote:
                    problem('%s: the summary differs from the comment of %s:\n  reference: %s\n  comment:   %s'
                            % (where, obj.identity, block.quote, obj.comment))
            special = MARKDOWN_SPECIAL.search(block.quote)
            if special:
                problem('%s: the summary holds %r, which Markdown would not show as written'
                        % (where, special.group(0)))
    for obj in catalog:
        if obj.synopsis not in seen:
            problem('%s (%s) has no entry: add the synopsis line\n  %s' % (obj.identity, obj.extension, obj.synopsis))


def normalize_output(text):
    lines = [line.rstrip() for line in text.split('\n')]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return '\n'.join(lines)


def check_examples(db, entries, installed, reference, preloaded):
    """Run every example in a transaction that is rolled back; compare its output where it shows one."""
    examples = 0
    skipped = 0
    started = time.time()
    for entry in entries:
        blocks = [b for b in entry.blocks if b.info[:2] == ['sql', 'example']]
        synopses = [b for b in entry.blocks if b.info[:2] == ['sql', 'synopsis']]
        if entry.level == 3 and synopses and not blocks:
            problem('%s:%d: entry "%s" has no example (```sql example)' % (reference, entry.start, entry.title))
        # an entry of geoacc_raster's objects alone, or an example marked "raster", needs geoacc_raster
        entry_needs_raster = bool(synopses) and all(block_extension(b) == 'geoacc_raster' for b in synopses)
        for block in blocks:
            if (entry_needs_raster or 'raster' in block.info[2:]) and 'geoacc_raster' not in installed \
                    or 'preloaded' in block.info[2:] and not preloaded:
                skipped += 1
                continue
            rc, out, err = db.run("BEGIN;\nSET LOCAL statement_timeout = '60s';\n" + '\n'.join(block.lines) +
                                  '\nROLLBACK;\n', extra=['-P', 'footer=off'])
            examples += 1
            where = '%s:%d' % (reference, block.start)
            if rc != 0:
                problem('%s: the example fails:\n%s' % (where, err.strip()))
            elif block.output is not None and normalize_output(out) != normalize_output('\n'.join(block.output.lines)):
                problem('%s: the example prints\n%s\nand not what its output block shows' % (where, out.rstrip()))
    print('check_reference: %d examples ran in %.1f s%s' % (
        examples, time.time() - started,
        ', %d skipped (geoacc_raster not installed, or geoacc not preloaded)' % skipped if skipped else ''))


def markdown_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file (a repeated one gets -1, -2, ...)."""
    anchors = set()
    count = {}
    in_code = False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                in_code = not in_code
            heading = None if in_code else re.match(r'^#{1,6}\s+(.*?)\s*$', line)
            if heading:
                anchor = github_anchor(heading.group(1))
                n = count.get(anchor, 0)
                count[anchor] = n + 1
                anchors.add(anchor if n == 0 else '%s-%d' % (anchor, n))
    return anchors


def check_links(entries, reference_path):
    """Links between the README and the reference (and to other Markdown files) lead to headings; the README
    links every entry."""
    readme = os.path.join(ROOT, 'README.md')
    linked = set()
    for source in (readme, reference_path):
        with open(source, encoding='utf-8') as f:
            text = f.read()
        for m in re.finditer(r'\]\(([^)\s#]*\.md)?(?:#([^)\s]*))?\)', text):
            target = os.path.normpath(os.path.join(os.path.dirname(source), m.group(1))) if m.group(1) else source
            if m.group(1) is None and m.group(2) is None:
                continue
            where = '%s:%d' % (os.path.relpath(source, ROOT), text.count('\n', 0, m.start()) + 1)
            if not os.path.exists(target):
                problem('%s: link to %s, which does not exist' % (where, m.group(1)))
                continue
            if m.group(2) and m.group(2) not in markdown_anchors(target):
                problem('%s: link to %s#%s, which is no heading there' % (where, os.path.relpath(target, ROOT),
                                                                            m.group(2)))
            if source == readme and target == reference_path and m.group(2):
                linked.add(m.group(2))
    for entry in entries:
        if entry.level == 3 and any(b.info[:2] == ['sql', 'synopsis'] for b in entry.blocks) \
                and entry.anchor not in linked:
            problem('%s:%d: entry "%s" is not linked from README.md (docs/reference.md#%s)'
                    % (os.path.relpath(reference_path, ROOT), entry.start, entry.title, entry.anchor))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--reference', default=os.path.join(ROOT, 'docs', 'reference.md'))
    parser.add_argument('--database', default='geoacc_reference_check',
                        help='scratch database, created (replacing one of that name) and dropped')
    parser.add_argument('--keep', action='store_true', help='leave the scratch database')
    args = parser.parse_args()

    pg_config = os.environ.get('PG_CONFIG', 'pg_config')
    bindir = subprocess.run([pg_config, '--bindir'], capture_output=True, text=True, check=True).stdout.strip()
    psql = os.path.join(bindir, 'psql')
    db = Psql(psql if os.path.exists(psql) else 'psql', args.database)
    reference = os.path.relpath(args.reference, ROOT)

    entries = parse_reference(args.reference)
    check_errors(entries, source_errors(read_errcodes(pg_config)), reference)
    check_links(entries, os.path.abspath(args.reference))

    rc, out, err = db.run('DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;\n' % (args.database, args.database),
                          database='postgres')
    if rc != 0:
        problem('cannot create the scratch database %s: %s' % (args.database, err.strip()))
        return 1
    try:
        rc, out, err = db.run("SET client_min_messages = warning;\nCREATE EXTENSION geoacc CASCADE;\n")
        if rc != 0:
            problem('CREATE EXTENSION geoacc failed: %s' % err.strip())
            return 1
        installed = ['geoacc']
        if query(db, "SELECT name FROM pg_available_extensions WHERE name = 'postgis_raster'"):
            rc, out, err = db.run("SET client_min_messages = warning;\nCREATE EXTENSION geoacc_raster CASCADE;\n")
            if rc != 0:
                problem('CREATE EXTENSION geoacc_raster failed: %s' % err.strip())
            else:
                installed.append('geoacc_raster')
        else:
            print('check_reference: postgis_raster is not available: the geoacc_raster entries are not checked')
        catalog = read_catalog(db)
        preloaded = geoacc_preloaded(db)
        check_synopses(entries, catalog, installed, reference, preloaded)
        check_examples(db, entries, installed, reference, preloaded)
    finally:
        if not args.keep:
            db.run('DROP DATABASE IF EXISTS %s;\n' % args.database, database='postgres')

    print('check_reference: %d objects, %d entries: %s' % (
        len(catalog), sum(1 for e in entries if e.level == 3),
        '%d problems' % len(problems) if problems else 'the reference matches'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
