/* Optional compiled helpers of the classifier (issue 30, speed): the same results as the pure-Python paths beside
 * each use (eval/classify/degeneracy.py, repetition.py, spacing.py, identifiers.py and glued.py), which stay and are
 * used where this module is not built (setup.py builds it as an optional extension; a failed build leaves the
 * package pure Python), where it is of another API version, or with SPECQUAL_PURE_PYTHON=1.
 * tests/unit/classify/test_fast_paths.py compares the two on many texts, random, unicode and adversarial ones.
 *
 * recurring_anchors(text, anchors, length, back, twice=False):
 *     [(a, j) for a in anchors if a > length and (j := text.rfind(text[a - length : a], max(0, a - back), a - 1)) >= 0]
 *     with `twice`, only those where the anchor occurs one period p = a - length - j before that too
 *     (j >= p and text[j - p : j - p + length] == text[a - length : a]) and is not all blanks (str.isspace).
 *
 * window_counts(tokens, classes, run):
 *     of a window of at most 256 tokens: ("f" * run in "".join(map(classes.get, tokens, repeat("o"))),
 *     len(set(zip(tokens, tokens[1:], tokens[2:]))), any(map(eq, tokens, tokens[1:]))), where every value of
 *     `classes` is "f" or "".
 *
 * spaced_chunks(text, min_len):
 *     (the characters of `text` other than space, newline, tab and CR, its chunks between those of min_len or more
 *     characters, in order).
 *
 * region_at(text, a, p):
 *     (start, end) of repetition._region_at(text, a, p): the periodic region of period p around the anchor end a,
 *     grown one character at a time instead of by galloping slice comparisons (the same largest extents).
 *
 * may_repeat(seq, max_unit, reps):
 *     degeneracy._may_repeat: whether some p <= max_unit has (reps - 1) * p consecutive i with seq[i] == seq[i + p].
 *
 * identifier_tokens(text):
 *     set(text.encode("utf-8", "surrogatepass").translate(identifiers._TO_SPACE).split()), the set built by adding
 *     the tokens in the same order (so it iterates in the same order).
 *
 * unknown_marked(tokens, known, halves, min_len):
 *     the tokens (bytes, in set order) that identifiers._check gives to IdentifierIndex.original_of, stripped of
 *     edge dots and dashes, less those for which original_of returns None at once: no candidate under either half
 *     key of `halves`, no digit and no slash.
 *
 * index_add(tokens, known, halves, min_len):
 *     identifiers.IdentifierIndex.add: the tokens not in `known` join it; those of them with a digit or a slash,
 *     stripped of edge dots and dashes, of min_len bytes or more, join it too and are listed under their two half
 *     keys (n, 0, tok[:n // 2]) and (n, 1, tok[n // 2:]) of `halves`, in the iteration order of `tokens` (the
 *     Python path lists them in the order of a set derived from it: both orders are those of sets of bytes, which
 *     differ from process to process with the hash seed).
 *
 * written_lookups(written, known, halves, min_len):
 *     unknown_marked of the tokens of `written` not in `known` that hold a digit or one of `_.-/`, in the iteration
 *     order of `written` (identifiers._check's `unknown` and `marked` sets, made in Python).
 *
 * segment_keys(tail, key_chars):
 *     of segments = neardup._segments(text) where tail = _unfenced(text[-READS:]): (len(segments), the number of
 *     distinct segment[:key_chars], the number of distinct segment[-key_chars:]).
 *
 * repeated_char(text, chars, length):
 *     any(c * length in text for c in chars).
 *
 * ascii_code_hint(line):
 *     degeneracy._code_hint(line) of an ASCII line (ValueError for another).
 *
 * non_ascii_words(text):
 *     list(bytelevel.non_ascii_words(text)): (start, end) of each run of non-space characters (str.isspace) that holds
 *     a non-ASCII one, in order (the matches of bytelevel._NON_ASCII_WORD).
 *
 * last_tokens(tail, line_tokens, interjections, token_chars, window_tokens):
 *     the loop of degeneracy._last_tokens over the lines of `tail` (already unfenced), from the end. A line of ASCII
 *     characters is judged and tokenized here (the prose test of degeneracy._prose_line, the tokenizer
 *     `\w+|[^\w\s]+` on the lowercased line, interjections left out); any other line is given to
 *     `line_tokens(line)`, which returns None (not prose) or (len(stripped), tokens). Returns the last
 *     `window_tokens` tokens, or None where the window starts inside a line (as the Python loop does).
 *
 * any_in(text, low, high):
 *     any(low <= ord(c) <= high for c in text): charsets.may_hold, exactly (the Python path is a prefilter of lead
 *     bytes), and textual._has_surrogate.
 *
 * glued_points(text, words, function_words, heads, tails, min_run, max_run):
 *     glued._glued_candidates_python as a list: the runs of ASCII letters of `text` (maximal, as [A-Za-z]+ finds
 *     them) of min_run to max_run letters whose letters after the first are lowercase, lowercased, whose
 *     glued.glue_points(run, words) is more than 0, in order, repeats included. function_words, heads and tails are
 *     degeneracy.FUNCTION_WORDS, glued.COMPOUND_HEADS and glued.COMPOUND_TAILS. Each set is a frozenset of str; the
 *     table of its ASCII words is built again only when another set is passed (the set is kept).
 *
 * words_over(text, limit):
 *     len(text.split(maxsplit=limit)) > limit: whether `text` has more than `limit` words between whitespace
 *     (str.isspace), counted without making them.
 *
 * pair_window(text, codes, code_of, matrix, n_classes, foreign, window):
 *     the pairs of wordpairs.pair_classes(text) (already blanked of code) and the sums of implausible_pairs:
 *     (number of pairs, number whose first class is foreign, lowest sum of `window` consecutive pair scores or of
 *     all where fewer, 0.0 with none). A token is a run of non-whitespace on a line ('\n' ends a line); its code
 *     (class * 4 + 2 * opens with a quote or bracket + closes with punctuation) comes from the dict `codes`, or
 *     from code_of(token) (which stores it there). `matrix` holds n_classes * n_classes doubles, the score of
 *     (a, b) at a * n_classes + b; `foreign` holds a byte per class (1: not an English word). Sums are made as the
 *     Python path makes them (prefix sums from 0.0, one addition at a time), so the values are the same.
 *
 * plain_run(text, function_words):
 *     the longest run of words of lowercase ASCII letters one space apart that are not members of function_words (a
 *     frozenset of str), within the stretches of `text` made of lowercase ASCII letters and spaces (any other
 *     character ends a stretch; two spaces end a run): at least salad.content_run's value where that is its
 *     min_run or more, and below min_run where content_run's is (salad._run_bound).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* recurring_anchors */

static PyObject *
recurring_anchors(PyObject *self, PyObject *args)
{
    PyObject *text, *anchors;
    Py_ssize_t length, back;
    int twice = 0;
    if (!PyArg_ParseTuple(args, "UOnn|p:recurring_anchors", &text, &anchors, &length, &back, &twice))
        return NULL;
    if (length <= 0) {
        PyErr_SetString(PyExc_ValueError, "length must be positive");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(anchors, "anchors must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const char *data = (const char *)PyUnicode_DATA(text);
    size_t width = (size_t)length * kind;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t a = PyLong_AsSsize_t(items[k]);
        if (a == -1 && PyErr_Occurred())
            goto fail;
        if (a <= length)
            continue;
        if (a > n) {
            PyErr_SetString(PyExc_ValueError, "anchor beyond the text");
            goto fail;
        }
        Py_ssize_t start = a - back > 0 ? a - back : 0;
        Py_ssize_t end = a - 1; /* str.rfind(sub, start, end): sub inside text[start:end] */
        const char *needle = data + (size_t)(a - length) * kind;
        Py_ssize_t j = -1;
        /* The last occurrence, searched backwards as str.rfind does: where the character before a candidate
         * position is not in the anchor (a 64-bit bloom filter says so), no occurrence overlaps it. */
#define SEARCH(T)                                                                                                  \
    {                                                                                                              \
        const T *d = (const T *)data;                                                                              \
        const T *p = d + (a - length);                                                                             \
        unsigned long long mask = 0;                                                                               \
        for (Py_ssize_t k = 0; k < length; k++)                                                                    \
            mask |= 1ULL << (p[k] & 63);                                                                           \
        for (Py_ssize_t i = end - length; i >= start; i--) {                                                       \
            if (d[i] == p[0] && d[i + length - 1] == p[length - 1] && memcmp(d + i, needle, width) == 0) {        \
                j = i;                                                                                             \
                break;                                                                                             \
            }                                                                                                      \
            if (i > start && !(mask & (1ULL << (d[i - 1] & 63))))                                                  \
                i -= length;                                                                                       \
        }                                                                                                          \
    }
        if (kind == PyUnicode_1BYTE_KIND)
            SEARCH(Py_UCS1)
        else if (kind == PyUnicode_2BYTE_KIND)
            SEARCH(Py_UCS2)
        else
            SEARCH(Py_UCS4)
#undef SEARCH
        if (j < 0)
            continue;
        if (twice) { /* the anchor also one period before its previous occurrence, and not all blanks */
            Py_ssize_t p = a - length - j;
            if (j < p || memcmp(data + (size_t)(j - p) * kind, needle, width) != 0)
                continue;
            int blank = 1;
            for (Py_ssize_t k = a - length; k < a && blank; k++)
                blank = Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, k));
            if (blank)
                continue;
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL)
            goto fail;
        PyObject *pa = PyLong_FromSsize_t(a), *pj = PyLong_FromSsize_t(j);
        if (pa == NULL || pj == NULL) {
            Py_XDECREF(pa);
            Py_XDECREF(pj);
            Py_DECREF(pair);
            goto fail;
        }
        PyTuple_SET_ITEM(pair, 0, pa);
        PyTuple_SET_ITEM(pair, 1, pj);
        if (PyList_Append(out, pair) < 0) {
            Py_DECREF(pair);
            goto fail;
        }
        Py_DECREF(pair);
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* last_tokens */

/* ASCII classes, as Python sees ASCII characters. */
enum {
    C_SPACE = 1,    /* str.isspace / re's \s: \t \n \v \f \r \x1c-\x1f and the space */
    C_WORD = 2,     /* re's \w: [A-Za-z0-9_] */
    C_ALPHA = 4,    /* str.isalpha and re's [^\W\d_]: [A-Za-z] */
    C_HINT = 8,     /* degeneracy._HINT_CHAR_ASCII: [0-9/\\_=(){}\[\]<>@#$%&|~^] */
    C_RUN = 16,     /* degeneracy._HINT_RUN's characters: [-*+.:] */
    C_BEFORE = 32,  /* degeneracy._WORD_BEFORE (its ASCII part): -"'([*_ */
    C_AFTER = 64,   /* degeneracy._WORD_AFTER (its ASCII part): .,;:!?"')]*_ */
};
static unsigned char cls[128];

static void
init_classes(void)
{
    const char *p;
    for (int c = 0; c < 128; c++) {
        unsigned char v = 0;
        if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f))
            v |= C_SPACE;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            v |= C_ALPHA | C_WORD;
        if ((c >= '0' && c <= '9') || c == '_')
            v |= C_WORD;
        cls[c] = v;
    }
    for (p = "0123456789/\\_=(){}[]<>@#$%&|~^"; *p; p++)
        cls[(unsigned char)*p] |= C_HINT;
    for (p = "-*+.:"; *p; p++)
        cls[(unsigned char)*p] |= C_RUN;
    for (p = "-\"'([*_"; *p; p++)
        cls[(unsigned char)*p] |= C_BEFORE;
    for (p = ".,;:!?\"')]*_"; *p; p++)
        cls[(unsigned char)*p] |= C_AFTER;
}

#define IS(c, k) (cls[(unsigned char)(c)] & (k))

/* degeneracy._code_hint on an ASCII line */
static int
code_hint(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t run = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (IS(s[i], C_HINT))
            return 1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (IS(s[i], C_RUN)) {
            if (++run >= 3)
                return 1;
        }
        else
            run = 0;
    }
    return 0;
}

/* Whether the chunk s[0:n] (no space in it) is one match of degeneracy._WORD (ASCII):
 * [-"'(\[*_]*[A-Za-z]+(?:[-'][A-Za-z]+)*[.,;:!?"')\]*_]* as a whole. */
static int
word_chunk(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t p = 0;
    while (p < n && IS(s[p], C_BEFORE))
        p++;
    if (p >= n || !IS(s[p], C_ALPHA))
        return 0;
    for (;;) {
        while (p < n && IS(s[p], C_ALPHA))
            p++;
        if (p + 1 < n && (s[p] == '-' || s[p] == '\'') && IS(s[p + 1], C_ALPHA)) {
            p++;
            continue;
        }
        break;
    }
    while (p < n && IS(s[p], C_AFTER))
        p++;
    return p == n;
}

/* chunk.lstrip(_WORD_BEFORE).rstrip(_WORD_AFTER).isalpha() (ASCII) */
static int
plain_chunk(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t p = 0, q = n;
    while (p < q && IS(s[p], C_BEFORE))
        p++;
    while (q > p && IS(s[q - 1], C_AFTER))
        q--;
    if (q <= p)
        return 0;
    for (Py_ssize_t i = p; i < q; i++) {
        if (!IS(s[i], C_ALPHA))
            return 0;
    }
    return 1;
}

/* degeneracy.mostly_words(line, line.split()) on an ASCII line */
static int
mostly_words(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t chunks = 0, plain = 0, words = 0, i = 0;
    while (i < n) {
        while (i < n && IS(s[i], C_SPACE))
            i++;
        if (i >= n)
            break;
        Py_ssize_t b = i;
        while (i < n && !IS(s[i], C_SPACE))
            i++;
        chunks++;
        plain += plain_chunk(s + b, i - b);
    }
    if (3 * plain > 2 * chunks)
        return 1;
    i = 0;
    while (i < n) {
        while (i < n && IS(s[i], C_SPACE))
            i++;
        if (i >= n)
            break;
        Py_ssize_t b = i;
        while (i < n && !IS(s[i], C_SPACE))
            i++;
        words += word_chunk(s + b, i - b);
    }
    return 3 * words > 2 * chunks;
}

/* The stripped prose line of the ASCII line s[0:n] (degeneracy._prose_line): its bounds, or 0 when not prose.
 * Empty and indented lines are the caller's. */
static int
prose_line(const unsigned char *s, Py_ssize_t n, Py_ssize_t *lo, Py_ssize_t *hi)
{
    Py_ssize_t b = 0, e = n;
    while (b < e && IS(s[b], C_SPACE))
        b++;
    while (e > b && IS(s[e - 1], C_SPACE))
        e--;
    if (b >= e)
        return 0;
    Py_ssize_t bars = 0, spaces = 0;
    for (Py_ssize_t i = b; i < e; i++) {
        bars += s[i] == '|';
        spaces += s[i] == ' ';
    }
    if (bars >= 2 || spaces + 1 < 3) /* MIN_LINE_WORDS; an ASCII line has no CJK */
        return 0;
    if (code_hint(s + b, e - b) && !mostly_words(s + b, e - b))
        return 0;
    *lo = b;
    *hi = e;
    return 1;
}

/* Append the tokens of the ASCII text s[0:n] lowercased (`\w+|[^\w\s]+`), interjections left out. */
static int
tokenize(const unsigned char *s, Py_ssize_t n, PyObject *interjections, PyObject *out)
{
    Py_ssize_t i = 0;
    while (i < n) {
        if (IS(s[i], C_SPACE)) {
            i++;
            continue;
        }
        Py_ssize_t b = i;
        int word = IS(s[i], C_WORD) != 0;
        if (word) {
            while (i < n && IS(s[i], C_WORD))
                i++;
        }
        else {
            while (i < n && !IS(s[i], C_WORD | C_SPACE))
                i++;
        }
        Py_ssize_t len = i - b;
        PyObject *tok = PyUnicode_New(len, 127);
        if (tok == NULL)
            return -1;
        unsigned char *dst = (unsigned char *)PyUnicode_DATA(tok);
        if (word) {
            for (Py_ssize_t k = 0; k < len; k++) {
                unsigned char c = s[b + k];
                dst[k] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
            }
        }
        else
            memcpy(dst, s + b, (size_t)len);
        {
            int found = PySet_Contains(interjections, tok);
            if (found < 0) {
                Py_DECREF(tok);
                return -1;
            }
            if (found) {
                Py_DECREF(tok);
                continue;
            }
        }
        if (PyList_Append(out, tok) < 0) {
            Py_DECREF(tok);
            return -1;
        }
        Py_DECREF(tok);
    }
    return 0;
}

static PyObject *
last_tokens(PyObject *self, PyObject *args)
{
    PyObject *tail, *line_tokens, *interjections;
    Py_ssize_t token_chars, window_tokens;
    if (!PyArg_ParseTuple(args, "UOOnn:last_tokens", &tail, &line_tokens, &interjections, &token_chars,
                          &window_tokens))
        return NULL;
    if (!PyAnySet_Check(interjections)) {
        PyErr_SetString(PyExc_TypeError, "interjections must be a set or frozenset");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(tail);
    int kind = PyUnicode_KIND(tail);
    const void *data = PyUnicode_DATA(tail);
    int ascii = PyUnicode_IS_ASCII(tail);
    PyObject *parts = PyList_New(0); /* one list of tokens per prose line, from the end */
    if (parts == NULL)
        return NULL;
    Py_ssize_t found = 0, size = 0, total = 0;
    Py_ssize_t end = n; /* the line read is tail[begin:end] */
    for (;;) {
        if (size >= token_chars || found >= window_tokens)
            break;
        if (end < 0)
            break;
        Py_ssize_t begin = end;
        int line_ascii = 1;
        if (ascii) {
            const unsigned char *s = (const unsigned char *)data;
            while (begin > 0 && s[begin - 1] != '\n')
                begin--;
        }
        else {
            while (begin > 0) {
                Py_UCS4 c = PyUnicode_READ(kind, data, begin - 1);
                if (c == '\n')
                    break;
                if (c >= 128)
                    line_ascii = 0;
                begin--;
            }
        }
        Py_ssize_t len = end - begin;
        Py_ssize_t next_end = begin - 1; /* the line before ends at the newline before this one */
        /* Empty and indented lines are never prose. */
        int skip = len == 0;
        if (!skip) {
            Py_UCS4 c0 = PyUnicode_READ(kind, data, begin);
            if (c0 == '\t')
                skip = 1;
            else if (c0 == ' ' && len >= 4 && PyUnicode_READ(kind, data, begin + 1) == ' ' &&
                     PyUnicode_READ(kind, data, begin + 2) == ' ' && PyUnicode_READ(kind, data, begin + 3) == ' ')
                skip = 1;
        }
        if (!skip) {
            PyObject *tokens = NULL;
            Py_ssize_t stripped = 0;
            if (line_ascii) {
                const unsigned char *s;
                unsigned char *copy = NULL;
                if (kind == PyUnicode_1BYTE_KIND)
                    s = (const unsigned char *)data + begin;
                else {
                    copy = PyMem_Malloc((size_t)len);
                    if (copy == NULL) {
                        PyErr_NoMemory();
                        goto fail;
                    }
                    for (Py_ssize_t k = 0; k < len; k++)
                        copy[k] = (unsigned char)PyUnicode_READ(kind, data, begin + k);
                    s = copy;
                }
                Py_ssize_t lo, hi;
                if (prose_line(s, len, &lo, &hi)) {
                    stripped = hi - lo;
                    if (size + stripped + 1 - 1 > token_chars) {
                        PyMem_Free(copy);
                        Py_DECREF(parts);
                        Py_RETURN_NONE; /* the window starts inside this line */
                    }
                    tokens = PyList_New(0);
                    if (tokens == NULL || tokenize(s + lo, hi - lo, interjections, tokens) < 0) {
                        Py_XDECREF(tokens);
                        PyMem_Free(copy);
                        goto fail;
                    }
                }
                PyMem_Free(copy);
            }
            else {
                PyObject *line = PyUnicode_Substring(tail, begin, end);
                if (line == NULL)
                    goto fail;
                PyObject *r = PyObject_CallOneArg(line_tokens, line);
                Py_DECREF(line);
                if (r == NULL)
                    goto fail;
                if (r != Py_None) {
                    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 || !PyList_Check(PyTuple_GET_ITEM(r, 1))) {
                        Py_DECREF(r);
                        PyErr_SetString(PyExc_TypeError, "line_tokens must return None or (int, list)");
                        goto fail;
                    }
                    stripped = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 0));
                    if (stripped == -1 && PyErr_Occurred()) {
                        Py_DECREF(r);
                        goto fail;
                    }
                    if (size + stripped + 1 - 1 > token_chars) {
                        Py_DECREF(r);
                        Py_DECREF(parts);
                        Py_RETURN_NONE;
                    }
                    tokens = PyTuple_GET_ITEM(r, 1);
                    Py_INCREF(tokens);
                }
                Py_DECREF(r);
            }
            if (tokens != NULL) {
                size += stripped + 1;
                found += PyList_GET_SIZE(tokens);
                int rc = PyList_Append(parts, tokens);
                Py_DECREF(tokens);
                if (rc < 0)
                    goto fail;
            }
        }
        if (begin == 0)
            break;
        end = next_end;
    }
    total = found;
    Py_ssize_t skip_tokens = total > window_tokens ? total - window_tokens : 0;
    PyObject *out = PyList_New(total - skip_tokens);
    if (out == NULL)
        goto fail;
    Py_ssize_t w = 0;
    for (Py_ssize_t p = PyList_GET_SIZE(parts) - 1; p >= 0; p--) {
        PyObject *part = PyList_GET_ITEM(parts, p);
        Py_ssize_t m = PyList_GET_SIZE(part);
        for (Py_ssize_t k = 0; k < m; k++) {
            if (skip_tokens > 0) {
                skip_tokens--;
                continue;
            }
            PyObject *tok = PyList_GET_ITEM(part, k);
            Py_INCREF(tok);
            PyList_SET_ITEM(out, w++, tok);
        }
    }
    Py_DECREF(parts);
    return out;
fail:
    Py_DECREF(parts);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* unknown_marked */

static PyObject *
half_key(Py_ssize_t n, int which, const char *s, Py_ssize_t len)
{
    PyObject *a = PyLong_FromSsize_t(n), *b = PyLong_FromLong(which), *c = PyBytes_FromStringAndSize(s, len);
    PyObject *key = (a && b && c) ? PyTuple_Pack(3, a, b, c) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    return key;
}

/* 1 where halves[key] exists, 0 where not, -1 on error */
static int
has_half(PyObject *halves, Py_ssize_t n, int which, const char *s, Py_ssize_t len)
{
    PyObject *key = half_key(n, which, s, len);
    if (key == NULL)
        return -1;
    PyObject *v = PyDict_GetItemWithError(halves, key);
    Py_DECREF(key);
    if (v == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int r = PyObject_IsTrue(v); /* `for original in halves.get(key, ())`: an empty list holds no candidate */
    return r;
}

static PyObject *
unknown_marked(PyObject *self, PyObject *args)
{
    PyObject *tokens, *known, *halves;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "OO!O!n:unknown_marked", &tokens, &PySet_Type, &known, &PyDict_Type, &halves,
                          &min_len))
        return NULL;
    PyObject *it = PyObject_GetIter(tokens);
    if (it == NULL)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        Py_DECREF(it);
        return NULL;
    }
    PyObject *tok;
    while ((tok = PyIter_Next(it)) != NULL) {
        if (!PyBytes_Check(tok)) {
            Py_DECREF(tok);
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
            goto fail;
        }
        const char *s = PyBytes_AS_STRING(tok);
        Py_ssize_t b = 0, e = PyBytes_GET_SIZE(tok);
        while (b < e && (s[b] == '.' || s[b] == '-'))
            b++;
        while (e > b && (s[e - 1] == '.' || s[e - 1] == '-'))
            e--;
        Py_ssize_t n = e - b;
        if (n < min_len) {
            Py_DECREF(tok);
            continue;
        }
        PyObject *stripped;
        if (n == PyBytes_GET_SIZE(tok))
            stripped = tok; /* bytes.strip returns the object itself where nothing is stripped */
        else {
            stripped = PyBytes_FromStringAndSize(s + b, n);
            Py_DECREF(tok);
            if (stripped == NULL)
                goto fail;
        }
        const char *t = PyBytes_AS_STRING(stripped);
        int in = PySet_Contains(known, stripped);
        if (in != 0) {
            Py_DECREF(stripped);
            if (in < 0)
                goto fail;
            continue;
        }
        Py_ssize_t half = n / 2;
        int cand = has_half(halves, n, 0, t, half);
        if (cand == 0)
            cand = has_half(halves, n, 1, t + half, n - half);
        if (cand < 0) {
            Py_DECREF(stripped);
            goto fail;
        }
        if (!cand) {
            int marked = 0;
            for (Py_ssize_t k = 0; k < n && !marked; k++)
                marked = (t[k] >= '0' && t[k] <= '9') || t[k] == '/';
            if (!marked) {
                Py_DECREF(stripped);
                continue;
            }
        }
        int rc = PyList_Append(out, stripped);
        Py_DECREF(stripped);
        if (rc < 0)
            goto fail;
    }
    if (PyErr_Occurred())
        goto fail;
    Py_DECREF(it);
    return out;
fail:
    Py_DECREF(it);
    Py_DECREF(out);
    return NULL;
}

/* halves.setdefault(key, []).append(tok); 0, or -1 on error */
static int
append_half(PyObject *halves, Py_ssize_t n, int which, const char *s, Py_ssize_t len, PyObject *tok)
{
    PyObject *key = half_key(n, which, s, len);
    if (key == NULL)
        return -1;
    PyObject *list = PyDict_GetItemWithError(halves, key); /* borrowed */
    if (list == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return -1;
        }
        list = PyList_New(0);
        int rc = list == NULL ? -1 : PyDict_SetItem(halves, key, list);
        Py_DECREF(key);
        Py_XDECREF(list); /* the dict holds it */
        if (rc < 0)
            return -1;
    }
    else
        Py_DECREF(key);
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "halves must map to lists");
        return -1;
    }
    return PyList_Append(list, tok);
}

static int
has_byte_in(const char *s, Py_ssize_t n, const char *set)
{
    for (Py_ssize_t k = 0; k < n; k++)
        if ((s[k] >= '0' && s[k] <= '9') || (s[k] != 0 && strchr(set, s[k]) != NULL))
            return 1;
    return 0;
}

static PyObject *
index_add(PyObject *self, PyObject *args)
{
    PyObject *tokens, *known, *halves;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "OO!O!n:index_add", &tokens, &PySet_Type, &known, &PyDict_Type, &halves, &min_len))
        return NULL;
    if (tokens == known) {
        PyErr_SetString(PyExc_ValueError, "tokens must not be the known set itself");
        return NULL;
    }
    PyObject *it = PyObject_GetIter(tokens);
    if (it == NULL)
        return NULL;
    PyObject *marked = PyList_New(0); /* the new tokens with a digit or a slash, in the iteration order */
    if (marked == NULL) {
        Py_DECREF(it);
        return NULL;
    }
    PyObject *tok;
    while ((tok = PyIter_Next(it)) != NULL) {
        if (!PyBytes_Check(tok)) {
            Py_DECREF(tok);
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
            goto fail;
        }
        int in = PySet_Contains(known, tok);
        if (in == 0) { /* new: known |= new (the stripped forms join only after every new token is in) */
            in = PySet_Add(known, tok);
            if (in == 0 && has_byte_in(PyBytes_AS_STRING(tok), PyBytes_GET_SIZE(tok), "/"))
                in = PyList_Append(marked, tok);
        }
        Py_DECREF(tok);
        if (in < 0)
            goto fail;
    }
    if (PyErr_Occurred())
        goto fail;
    Py_CLEAR(it);
    for (Py_ssize_t m = 0; m < PyList_GET_SIZE(marked); m++) {
        tok = PyList_GET_ITEM(marked, m); /* borrowed */
        const char *s = PyBytes_AS_STRING(tok);
        Py_ssize_t b = 0, e = PyBytes_GET_SIZE(tok);
        while (b < e && (s[b] == '.' || s[b] == '-'))
            b++;
        while (e > b && (s[e - 1] == '.' || s[e - 1] == '-'))
            e--;
        Py_ssize_t n = e - b;
        if (n < min_len)
            continue;
        PyObject *stripped;
        if (n == PyBytes_GET_SIZE(tok)) {
            stripped = tok;
            Py_INCREF(stripped);
        }
        else if ((stripped = PyBytes_FromStringAndSize(s + b, n)) == NULL)
            goto fail;
        const char *t = PyBytes_AS_STRING(stripped);
        Py_ssize_t half = n / 2;
        int rc = PySet_Add(known, stripped);
        if (rc == 0)
            rc = append_half(halves, n, 0, t, half, stripped);
        if (rc == 0)
            rc = append_half(halves, n, 1, t + half, n - half, stripped);
        Py_DECREF(stripped);
        if (rc < 0)
            goto fail;
    }
    Py_DECREF(marked);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(it);
    Py_DECREF(marked);
    return NULL;
}

/* unknown_marked of the tokens of `written` that are not in `known` and hold a digit or one of `_.-/` */
static PyObject *
written_lookups(PyObject *self, PyObject *args)
{
    PyObject *written, *known, *halves;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "OO!O!n:written_lookups", &written, &PySet_Type, &known, &PyDict_Type, &halves,
                          &min_len))
        return NULL;
    PyObject *it = PyObject_GetIter(written);
    if (it == NULL)
        return NULL;
    PyObject *marked = PyList_New(0);
    if (marked == NULL) {
        Py_DECREF(it);
        return NULL;
    }
    PyObject *tok;
    while ((tok = PyIter_Next(it)) != NULL) {
        if (!PyBytes_Check(tok)) {
            Py_DECREF(tok);
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes");
            goto fail;
        }
        int in = PySet_Contains(known, tok);
        if (in == 0 && has_byte_in(PyBytes_AS_STRING(tok), PyBytes_GET_SIZE(tok), "_.-/"))
            in = PyList_Append(marked, tok);
        Py_DECREF(tok);
        if (in < 0)
            goto fail;
    }
    if (PyErr_Occurred())
        goto fail;
    Py_DECREF(it);
    PyObject *call = Py_BuildValue("(OOOn)", marked, known, halves, min_len);
    Py_DECREF(marked);
    if (call == NULL)
        return NULL;
    PyObject *out = unknown_marked(self, call);
    Py_DECREF(call);
    return out;
fail:
    Py_DECREF(it);
    Py_DECREF(marked);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* window_counts */

static int
cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static PyObject *
window_counts(PyObject *self, PyObject *args)
{
    PyObject *tokens, *classes;
    Py_ssize_t run;
    if (!PyArg_ParseTuple(args, "O!O!n:window_counts", &PyList_Type, &tokens, &PyDict_Type, &classes, &run))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(tokens);
    if (n > 256) {
        PyErr_SetString(PyExc_ValueError, "at most 256 tokens");
        return NULL;
    }
    long ids[256], keys[256];
    PyObject *first = PyDict_New(); /* token -> index of its first occurrence */
    if (first == NULL)
        return NULL;
    Py_ssize_t cur = 0;
    int hit = 0, doubled = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *tok = PyList_GET_ITEM(tokens, i);
        PyObject *k = PyDict_GetItemWithError(first, tok);
        if (k == NULL) {
            if (PyErr_Occurred())
                goto fail;
            PyObject *v = PyLong_FromSsize_t(i);
            if (v == NULL || PyDict_SetItem(first, tok, v) < 0) {
                Py_XDECREF(v);
                goto fail;
            }
            Py_DECREF(v);
            ids[i] = (long)i;
        }
        else
            ids[i] = PyLong_AsLong(k);
        if (i > 0 && ids[i] == ids[i - 1])
            doubled = 1;
        /* "".join(map(_TOKEN_CLASS.get, tokens, repeat("o"))) holds "f" * run: "" is transparent */
        PyObject *c = PyDict_GetItemWithError(classes, tok);
        if (c == NULL && PyErr_Occurred())
            goto fail;
        if (c == NULL)
            cur = 0;
        else if (!PyUnicode_Check(c)) {
            PyErr_SetString(PyExc_TypeError, "classes must be strings");
            goto fail;
        }
        else if (PyUnicode_GET_LENGTH(c) == 0)
            ;
        else if (PyUnicode_GET_LENGTH(c) == 1 && PyUnicode_READ_CHAR(c, 0) == 'f') {
            if (++cur >= run)
                hit = 1;
        }
        else {
            PyErr_SetString(PyExc_ValueError, "classes must be 'f' or ''");
            goto fail;
        }
    }
    Py_DECREF(first);
    Py_ssize_t m = n >= 3 ? n - 2 : 0, distinct = 0;
    for (Py_ssize_t i = 0; i < m; i++)
        keys[i] = (ids[i] << 16) | (ids[i + 1] << 8) | ids[i + 2];
    qsort(keys, (size_t)m, sizeof(long), cmp_long);
    for (Py_ssize_t i = 0; i < m; i++)
        distinct += i == 0 || keys[i] != keys[i - 1];
    return Py_BuildValue("(OnO)", hit ? Py_True : Py_False, distinct, doubled ? Py_True : Py_False);
fail:
    Py_DECREF(first);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* spaced_chunks */

static PyObject *
spaced_chunks(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "Un:spaced_chunks", &text, &min_len))
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), seps = 0, run = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i <= n; i++) {
        Py_UCS4 c = i < n ? PyUnicode_READ(kind, data, i) : ' ';
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            seps += i < n;
            if (run >= min_len) {
                PyObject *chunk = PyUnicode_Substring(text, i - run, i);
                if (chunk == NULL || PyList_Append(out, chunk) < 0) {
                    Py_XDECREF(chunk);
                    Py_DECREF(out);
                    return NULL;
                }
                Py_DECREF(chunk);
            }
            run = 0;
        }
        else
            run++;
    }
    PyObject *r = Py_BuildValue("(nO)", n - seps, out);
    Py_DECREF(out);
    return r;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* identifier_tokens */

/* keep_or_space[c]: c where c is an identifier character (ASCII), a space for any other ASCII character;
 * separator[b]: 1 for the bytes that end a token (those ASCII characters), 0 for the others (UTF-8 bytes too) */
static char keep_or_space[128];
static unsigned char separator[256];

static void
init_keep(void)
{
    for (int c = 0; c < 128; c++) {
        keep_or_space[c] = ' ';
        separator[c] = 1;
    }
    for (const char *p = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/"; *p; p++) {
        keep_or_space[(unsigned char)*p] = *p;
        separator[(unsigned char)*p] = 0;
    }
}

/* The distinct tokens of one text, each kept once (a token repeats many times in code and logs: the bytes object of
 * a repeat is never made). An open-addressing table of (start, length) slices of the encoded text. A slot is taken
 * where its `stamp` is the table's: the table of one call is reused by the next without clearing it. */
typedef struct {
    Py_ssize_t start, len;
    uint64_t hash;
    uint64_t stamp; /* 64 bits: never wraps in practice (a wrap clears the table taken) */
} slice_entry;

typedef struct {
    slice_entry *slots;
    size_t mask, used;
    uint64_t stamp;
} slice_set;

#define SLICE_SET_MIN 256
#define SLICE_SET_KEPT 16384 /* the largest table kept for the next call (512 KiB) */
static slice_entry *kept_slots = NULL;
static size_t kept_size = 0;
static uint64_t kept_stamp = 0;

#define FNV_OFFSET 1469598103934665603ULL /* FNV-1a */
#define FNV_PRIME 1099511628211ULL

static int
slice_set_init(slice_set *set)
{
    set->used = 0;
    if (kept_slots != NULL) { /* taken from the cache, so a nested call would allocate its own */
        set->slots = kept_slots;
        set->mask = kept_size - 1;
        kept_slots = NULL;
        if (++kept_stamp == 0) { /* wrapped: every slot is free again once cleared */
            memset(set->slots, 0, kept_size * sizeof(slice_entry));
            kept_stamp = 1;
        }
        set->stamp = kept_stamp;
        return 0;
    }
    set->slots = PyMem_Calloc(SLICE_SET_MIN, sizeof(slice_entry));
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    set->mask = SLICE_SET_MIN - 1;
    set->stamp = kept_stamp == 0 ? (kept_stamp = 1) : kept_stamp;
    return 0;
}

static void
slice_set_done(slice_set *set)
{
    size_t size = set->mask + 1;
    if (kept_slots == NULL && size <= SLICE_SET_KEPT) {
        kept_slots = set->slots;
        kept_size = size;
    }
    else
        PyMem_Free(set->slots);
    set->slots = NULL;
}

/* 1 where the slice buf[start:start + len], of hash h (slice_hash), was added, 0 where it was there already, -1 on
 * error */
static int
slice_set_add_hashed(slice_set *set, const char *buf, Py_ssize_t start, Py_ssize_t len, uint64_t h)
{
    if (2 * (set->used + 1) > set->mask + 1) {
        size_t size = 2 * (set->mask + 1);
        slice_entry *slots = PyMem_Calloc(size, sizeof(slice_entry));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; i <= set->mask; i++) {
            if (set->slots[i].stamp != set->stamp)
                continue;
            size_t j = (size_t)set->slots[i].hash & (size - 1);
            while (slots[j].stamp == set->stamp)
                j = (j + 1) & (size - 1);
            slots[j] = set->slots[i];
        }
        PyMem_Free(set->slots);
        set->slots = slots;
        set->mask = size - 1;
    }
    size_t j = (size_t)h & set->mask;
    while (set->slots[j].stamp == set->stamp) {
        slice_entry *e = &set->slots[j];
        if (e->hash == h && e->len == len && memcmp(buf + e->start, buf + start, (size_t)len) == 0)
            return 0;
        j = (j + 1) & set->mask;
    }
    set->slots[j].start = start;
    set->slots[j].len = len;
    set->slots[j].hash = h;
    set->slots[j].stamp = set->stamp;
    set->used++;
    return 1;
}

#define ENCODE_IDENTIFIER_BYTES(TYPE)                                                                                  \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                           \
            Py_UCS4 c = d[i];                                                                                          \
            if (c < 0x80)                                                                                              \
                buf[len++] = keep_or_space[c];                                                                         \
            else if (c < 0x800) {                                                                                      \
                buf[len++] = (char)(0xc0 | (c >> 6));                                                                  \
                buf[len++] = (char)(0x80 | (c & 0x3f));                                                                \
            }                                                                                                          \
            else if (c < 0x10000) {                                                                                    \
                buf[len++] = (char)(0xe0 | (c >> 12));                                                                 \
                buf[len++] = (char)(0x80 | ((c >> 6) & 0x3f));                                                         \
                buf[len++] = (char)(0x80 | (c & 0x3f));                                                                \
            }                                                                                                          \
            else {                                                                                                     \
                buf[len++] = (char)(0xf0 | (c >> 18));                                                                 \
                buf[len++] = (char)(0x80 | ((c >> 12) & 0x3f));                                                        \
                buf[len++] = (char)(0x80 | ((c >> 6) & 0x3f));                                                         \
                buf[len++] = (char)(0x80 | (c & 0x3f));                                                                \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* The text as UTF-8 (surrogates as three bytes, as "surrogatepass" writes them), every ASCII character that cannot be
 * part of an identifier written as a space; *out is PyMem_Malloc'ed, *out_len its length. */
static int
identifier_bytes(PyObject *text, char **out, Py_ssize_t *out_len)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (n > PY_SSIZE_T_MAX / 4 - 1) {
        PyErr_NoMemory();
        return -1;
    }
    char *buf = PyMem_Malloc((size_t)(kind == PyUnicode_1BYTE_KIND ? 2 * n + 1 : 4 * n + 1));
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t len = 0;
    if (kind == PyUnicode_1BYTE_KIND)
        ENCODE_IDENTIFIER_BYTES(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        ENCODE_IDENTIFIER_BYTES(Py_UCS2);
    else
        ENCODE_IDENTIFIER_BYTES(Py_UCS4);
    *out = buf;
    *out_len = len;
    return 0;
}

static PyObject *
identifier_tokens(PyObject *self, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:identifier_tokens", &text))
        return NULL;
    char *buf = NULL; /* the encoded text, where it is not ASCII (an ASCII text is its own UTF-8) */
    const char *src;
    Py_ssize_t len;
    if (PyUnicode_IS_ASCII(text)) {
        src = (const char *)PyUnicode_DATA(text);
        len = PyUnicode_GET_LENGTH(text);
    }
    else {
        if (identifier_bytes(text, &buf, &len) < 0)
            return NULL;
        src = buf;
    }
    slice_set seen;
    if (slice_set_init(&seen) < 0) {
        PyMem_Free(buf);
        return NULL;
    }
    PyObject *out = PySet_New(NULL);
    if (out == NULL)
        goto fail;
    Py_ssize_t i = 0;
    while (i < len) {
        while (i < len && separator[(unsigned char)src[i]])
            i++;
        Py_ssize_t start = i;
        uint64_t h = FNV_OFFSET;
        while (i < len && !separator[(unsigned char)src[i]]) {
            h = (h ^ (unsigned char)src[i]) * FNV_PRIME;
            i++;
        }
        if (i == start)
            break;
        int added = slice_set_add_hashed(&seen, src, start, i - start, h);
        if (added < 0)
            goto fail;
        if (added) { /* a repeat would leave the set as it is: the same set, in the same order */
            PyObject *tok = PyBytes_FromStringAndSize(src + start, i - start);
            if (tok == NULL || PySet_Add(out, tok) < 0) {
                Py_XDECREF(tok);
                goto fail;
            }
            Py_DECREF(tok);
        }
    }
    slice_set_done(&seen);
    PyMem_Free(buf);
    return out;
fail:
    slice_set_done(&seen);
    PyMem_Free(buf);
    Py_XDECREF(out);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* segment_keys */

static int
slice_set_clear(slice_set *set)
{
    set->used = 0;
    if (++kept_stamp == 0) {
        memset(set->slots, 0, (set->mask + 1) * sizeof(slice_entry));
        kept_stamp = 1;
    }
    set->stamp = kept_stamp;
    return 0;
}

static int
segment_edge(Py_UCS4 c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '.' || c == '!' || c == '?';
}

#define SEGMENT_TRANSFORM(TYPE)                                                                                        \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                           \
            Py_UCS4 c = d[i];                                                                                          \
            if (c == '\n' || c == '!' || c == '?') {                                                                   \
                Py_UCS4 next = i + 1 < n ? d[i + 1] : 0;                                                               \
                if ((c == '\n' && next == '\n') || (c != '\n' && next == ' ')) {                                       \
                    f[len++] = '.';                                                                                    \
                    f[len++] = ' ';                                                                                    \
                    i++;                                                                                               \
                }                                                                                                      \
                else {                                                                                                 \
                    Py_UCS4 out = c == '\n' && len > 0 && f[len - 1] == '.' ? ' ' : c;                                 \
                    f[len++] = out;                                                                                    \
                }                                                                                                      \
            }                                                                                                          \
            else if (c == 0x3002 || c == 0xff01 || c == 0xff1f) {                                                      \
                f[len++] = '.';                                                                                        \
                f[len++] = ' ';                                                                                        \
            }                                                                                                          \
            else                                                                                                       \
                f[len++] = c;                                                                                          \
        }                                                                                                              \
    } while (0)

static PyObject *
segment_keys(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t key_chars;
    if (!PyArg_ParseTuple(args, "Un:segment_keys", &text, &key_chars))
        return NULL;
    if (key_chars <= 0) {
        PyErr_SetString(PyExc_ValueError, "key_chars must be positive");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (n > PY_SSIZE_T_MAX / 16 - 2)
        return PyErr_NoMemory();
    /* The text after neardup._ENDS's replacements, in their order, done in one pass: "\n\n" pairs from the left; "! ",
     * "? " (which no pair makes or breaks); ".\n" where the newline is left of a pair and the character written before
     * it is a period (a replacement writes ". ", which ends in a space); the CJK marks. */
    Py_UCS4 *f = PyMem_Malloc((size_t)(2 * n + 1) * sizeof(Py_UCS4));
    Py_ssize_t *bounds = PyMem_Malloc((size_t)(n + 2) * 2 * sizeof(Py_ssize_t)); /* (start, end) of each segment */
    if (f == NULL || bounds == NULL) {
        PyMem_Free(f);
        PyMem_Free(bounds);
        return PyErr_NoMemory();
    }
    Py_ssize_t len = 0;
    if (kind == PyUnicode_1BYTE_KIND)
        SEGMENT_TRANSFORM(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        SEGMENT_TRANSFORM(Py_UCS2);
    else
        SEGMENT_TRANSFORM(Py_UCS4);
    /* The pieces between ". " (str.split), stripped of neardup._EDGES, the empty ones left out. */
    Py_ssize_t segments = 0;
    for (Py_ssize_t j = 0; j <= len;) {
        Py_ssize_t k = j;
        while (k + 1 < len && !(f[k] == '.' && f[k + 1] == ' '))
            k++;
        if (k + 1 >= len)
            k = len; /* the last piece */
        Py_ssize_t b = j, e = k;
        while (b < e && segment_edge(f[b]))
            b++;
        while (e > b && segment_edge(f[e - 1]))
            e--;
        if (e > b) {
            bounds[2 * segments] = b;
            bounds[2 * segments + 1] = e;
            segments++;
        }
        j = k + 2;
    }
    /* Their first and last key_chars characters, counted as distinct keys. */
    slice_set keys;
    Py_ssize_t distinct[2] = {0, 0};
    if (slice_set_init(&keys) < 0)
        goto fail;
    for (int which = 0; which < 2; which++) {
        if (which == 1)
            slice_set_clear(&keys);
        for (Py_ssize_t g = 0; g < segments; g++) {
            Py_ssize_t b = bounds[2 * g], e = bounds[2 * g + 1];
            Py_ssize_t m = e - b < key_chars ? e - b : key_chars;
            Py_ssize_t at = which == 0 ? b : e - m;
            uint64_t h = FNV_OFFSET;
            for (Py_ssize_t q = at; q < at + m; q++)
                h = (h ^ f[q]) * FNV_PRIME;
            int added = slice_set_add_hashed(&keys, (const char *)f, at * (Py_ssize_t)sizeof(Py_UCS4),
                                             m * (Py_ssize_t)sizeof(Py_UCS4), h);
            if (added < 0) {
                slice_set_done(&keys);
                goto fail;
            }
            distinct[which] += added;
        }
    }
    slice_set_done(&keys);
    PyMem_Free(f);
    PyMem_Free(bounds);
    return Py_BuildValue("(nnn)", segments, distinct[0], distinct[1]);
fail:
    PyMem_Free(f);
    PyMem_Free(bounds);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* region_at, may_repeat */

static PyObject *
region_at(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t a, p;
    if (!PyArg_ParseTuple(args, "Unn:region_at", &text, &a, &p))
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (p <= 0 || a < p || a > n) {
        PyErr_SetString(PyExc_ValueError, "need 0 < p <= a <= len(text)");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t back = 0, fwd = 0;
    /* the largest k <= a - p with text[a - k : a] == text[a - k - p : a - p] */
    while (back < a - p && PyUnicode_READ(kind, data, a - 1 - back) == PyUnicode_READ(kind, data, a - p - 1 - back))
        back++;
    /* the largest m <= n - a with text[a : a + m] == text[a - p : a - p + m] */
    while (fwd < n - a && PyUnicode_READ(kind, data, a + fwd) == PyUnicode_READ(kind, data, a - p + fwd))
        fwd++;
    return Py_BuildValue("(nn)", a - back - p, a + fwd);
}

static PyObject *
may_repeat(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    Py_ssize_t max_unit, reps;
    if (!PyArg_ParseTuple(args, "y*nn:may_repeat", &buf, &max_unit, &reps))
        return NULL;
    const unsigned char *s = (const unsigned char *)buf.buf;
    Py_ssize_t n = buf.len;
    int found = 0;
    for (Py_ssize_t p = 1; p <= max_unit && !found; p++) {
        if (n < reps * p)
            break;
        Py_ssize_t need = (reps - 1) * p, run = 0;
        if (need <= 0) { /* bytes(0) is in any diff */
            found = 1;
            break;
        }
        for (Py_ssize_t i = 0; i + p < n; i++) {
            if (s[i] == s[i + p]) {
                if (++run >= need) {
                    found = 1;
                    break;
                }
            }
            else
                run = 0;
        }
    }
    PyBuffer_Release(&buf);
    return PyBool_FromLong(found);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* any_in */

/* In blocks of 64 characters without an early exit inside a block, which the compiler vectorizes. */
#define ANY_IN(TYPE)                                                                                                   \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = 0;                                                                                              \
        for (; i + 64 <= n; i += 64) {                                                                                 \
            int hit = 0;                                                                                               \
            for (int k = 0; k < 64; k++)                                                                               \
                hit |= (Py_UCS4)d[i + k] - (Py_UCS4)low <= span;                                                       \
            if (hit)                                                                                                   \
                Py_RETURN_TRUE;                                                                                        \
        }                                                                                                              \
        for (; i < n; i++)                                                                                             \
            if ((Py_UCS4)d[i] - (Py_UCS4)low <= span)                                                                  \
                Py_RETURN_TRUE;                                                                                        \
    } while (0)

static PyObject *
any_in(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t low, high;
    if (!PyArg_ParseTuple(args, "Unn:any_in", &text, &low, &high))
        return NULL;
    if (high > 0x10ffff)
        high = 0x10ffff;
    if (low < 0)
        low = 0;
    if (low > high || low > (Py_ssize_t)PyUnicode_MAX_CHAR_VALUE(text))
        Py_RETURN_FALSE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_UCS4 span = (Py_UCS4)(high - low); /* c - low <= span, unsigned: low <= c <= high */
    if (kind == PyUnicode_1BYTE_KIND)
        ANY_IN(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        ANY_IN(Py_UCS2);
    else
        ANY_IN(Py_UCS4);
    Py_RETURN_FALSE;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* repeated_char, ascii_code_hint */

/* A run of `length` ends at some position e >= i (no run ends before i): where d[i] is not a listed character, every
 * run ending in [i, i + length) would hold it, so the next candidate is i + length; where it is, its run [j, k) is
 * either long enough or ends every candidate before k + length - 1 (a run holds one character). */
#define REPEATED_CHAR(TYPE)                                                                                            \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = length - 1;                                                                                     \
        while (i < n) {                                                                                                \
            Py_UCS4 c = d[i];                                                                                          \
            int listed = c < 128 ? ascii[c] : 0;                                                                       \
            for (Py_ssize_t q = 0; c >= 128 && q < m && !listed; q++)                                                  \
                listed = PyUnicode_READ(ckind, cdata, q) == c;                                                         \
            if (!listed) {                                                                                             \
                i += length;                                                                                           \
                continue;                                                                                              \
            }                                                                                                          \
            Py_ssize_t j = i, k = i + 1;                                                                               \
            while (j > 0 && d[j - 1] == c && k - j < length)                                                           \
                j--;                                                                                                   \
            while (k < n && d[k] == c && k - j < length)                                                               \
                k++;                                                                                                   \
            if (k - j >= length)                                                                                       \
                Py_RETURN_TRUE;                                                                                        \
            i = k + length - 1;                                                                                        \
        }                                                                                                              \
    } while (0)

static PyObject *
repeated_char(PyObject *self, PyObject *args)
{
    PyObject *text, *chars;
    Py_ssize_t length;
    if (!PyArg_ParseTuple(args, "UUn:repeated_char", &text, &chars, &length))
        return NULL;
    if (length <= 0) {
        PyErr_SetString(PyExc_ValueError, "length must be positive");
        return NULL;
    }
    unsigned char ascii[128] = {0};
    Py_ssize_t m = PyUnicode_GET_LENGTH(chars);
    int ckind = PyUnicode_KIND(chars);
    const void *cdata = PyUnicode_DATA(chars);
    for (Py_ssize_t k = 0; k < m; k++) {
        Py_UCS4 c = PyUnicode_READ(ckind, cdata, k);
        if (c < 128)
            ascii[c] = 1;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        REPEATED_CHAR(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        REPEATED_CHAR(Py_UCS2);
    else
        REPEATED_CHAR(Py_UCS4);
    Py_RETURN_FALSE;
}

static PyObject *
ascii_code_hint(PyObject *self, PyObject *args)
{
    PyObject *line;
    if (!PyArg_ParseTuple(args, "U:ascii_code_hint", &line))
        return NULL;
    if (!PyUnicode_IS_ASCII(line)) {
        PyErr_SetString(PyExc_ValueError, "the line must be ASCII");
        return NULL;
    }
    return PyBool_FromLong(code_hint((const unsigned char *)PyUnicode_DATA(line), PyUnicode_GET_LENGTH(line)));
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* non_ascii_words */

#define NON_ASCII_WORDS(TYPE)                                                                                          \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t end = 0, i = 0;                                                                                     \
        while (i < n) {                                                                                                \
            Py_UCS4 c = d[i];                                                                                          \
            if (c < 0x80 || Py_UNICODE_ISSPACE(c)) {                                                                   \
                i++;                                                                                                   \
                continue;                                                                                              \
            }                                                                                                          \
            Py_ssize_t start = i;                                                                                      \
            while (start > end && !Py_UNICODE_ISSPACE(d[start - 1]))                                                   \
                start--;                                                                                               \
            end = i + 1;                                                                                               \
            while (end < n && !Py_UNICODE_ISSPACE(d[end]))                                                             \
                end++;                                                                                                 \
            PyObject *pair = Py_BuildValue("(nn)", start, end);                                                        \
            if (pair == NULL || PyList_Append(out, pair) < 0) {                                                        \
                Py_XDECREF(pair);                                                                                      \
                Py_DECREF(out);                                                                                        \
                return NULL;                                                                                           \
            }                                                                                                          \
            Py_DECREF(pair);                                                                                           \
            i = end;                                                                                                   \
        }                                                                                                              \
    } while (0)

static PyObject *
non_ascii_words(PyObject *self, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:non_ascii_words", &text))
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL || PyUnicode_IS_ASCII(text))
        return out;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        NON_ASCII_WORDS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        NON_ASCII_WORDS(Py_UCS2);
    else
        NON_ASCII_WORDS(Py_UCS4);
    return out;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* glued_points */

#define LEX_MAX_WORD 80 /* longer words of a set can never equal a look-up (at most max_run + 3 letters) */
#define GLUED_MAX_RUN 64

typedef struct {
    uint32_t hash;
    uint32_t off; /* into pool; UINT32_MAX for an empty slot */
    uint32_t len;
} LexSlot;

typedef struct {
    PyObject *set; /* the frozenset the table was built from (a strong reference) */
    LexSlot *slots;
    char *pool;
    size_t mask;
} LexTable;

/* glued.lexicon(), degeneracy.FUNCTION_WORDS, glued.COMPOUND_HEADS and glued.COMPOUND_TAILS: one set each per
 * process, so each table is built once */
static LexTable lex_words, lex_function, lex_heads, lex_tails;

static uint32_t
lex_hash(const char *s, Py_ssize_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static int
lex_contains(const LexTable *t, const char *s, Py_ssize_t n)
{
    uint32_t h = lex_hash(s, n);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const LexSlot *slot = &t->slots[i];
        if (slot->off == UINT32_MAX)
            return 0;
        if (slot->hash == h && slot->len == (uint32_t)n && memcmp(t->pool + slot->off, s, (size_t)n) == 0)
            return 1;
    }
}

/* The table of the ASCII str members of `words` of at most LEX_MAX_WORD characters (no other member can equal an
 * ASCII look-up of at most that length); 0, or -1 with an exception set. */
static int
lex_build(LexTable *t, PyObject *words)
{
    if (words == t->set)
        return 0;
    if (!PyFrozenSet_Check(words)) { /* immutable: the table stays valid while the set is kept */
        PyErr_SetString(PyExc_TypeError, "glued_points: the word sets must be frozensets of str");
        return -1;
    }
    Py_ssize_t count = PySet_GET_SIZE(words);
    size_t cap = 8;
    while (cap < 2 * (size_t)count + 8)
        cap <<= 1;
    LexSlot *slots = PyMem_Malloc(cap * sizeof(LexSlot));
    char *pool = PyMem_Malloc((size_t)count * LEX_MAX_WORD + 1);
    PyObject *it = slots != NULL && pool != NULL ? PyObject_GetIter(words) : NULL, *item;
    if (it == NULL) {
        PyMem_Free(slots);
        PyMem_Free(pool);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        slots[i].off = UINT32_MAX;
    size_t used = 0;
    while ((item = PyIter_Next(it)) != NULL) {
        if (PyUnicode_Check(item) && PyUnicode_IS_ASCII(item) && PyUnicode_GET_LENGTH(item) <= LEX_MAX_WORD) {
            Py_ssize_t n = PyUnicode_GET_LENGTH(item);
            const char *s = (const char *)PyUnicode_DATA(item);
            uint32_t h = lex_hash(s, n);
            size_t i = h & (cap - 1);
            while (slots[i].off != UINT32_MAX)
                i = (i + 1) & (cap - 1);
            memcpy(pool + used, s, (size_t)n);
            slots[i].hash = h;
            slots[i].off = (uint32_t)used;
            slots[i].len = (uint32_t)n;
            used += (size_t)n;
        }
        Py_DECREF(item);
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        PyMem_Free(slots);
        PyMem_Free(pool);
        return -1;
    }
    PyMem_Free(t->slots);
    PyMem_Free(t->pool);
    t->slots = slots;
    t->pool = pool;
    t->mask = cap - 1;
    Py_INCREF(words);
    Py_XSETREF(t->set, words);
    return 0;
}

static const char *const glued_endings[] = {"s", "es", "ed", "d", "ing", "ly"};

/* glued.known(word, words) of a lowercase ASCII word of at most GLUED_MAX_RUN letters */
static int
lex_known(const char *w, Py_ssize_t n)
{
    char buf[GLUED_MAX_RUN + 8];
    if (lex_contains(&lex_words, w, n))
        return 1;
    memcpy(buf, w, (size_t)n);
    for (size_t k = 0; k < sizeof(glued_endings) / sizeof(glued_endings[0]); k++) {
        const char *e = glued_endings[k];
        Py_ssize_t m = (Py_ssize_t)strlen(e);
        memcpy(buf + n, e, (size_t)m);
        if (lex_contains(&lex_words, buf, n + m))
            return 1;
        if (n > m + 2 && memcmp(w + n - m, e, (size_t)m) == 0 && lex_contains(&lex_words, w, n - m))
            return 1;
    }
    if (n >= 3 && memcmp(w + n - 3, "ing", 3) == 0) {
        buf[n - 3] = 'e';
        return lex_contains(&lex_words, buf, n - 2);
    }
    return 0;
}

/* glue_points(w, words) > 0 of a lowercase ASCII run of at most GLUED_MAX_RUN letters that is not lex_known:
 * glued._pieces (the first split into the fewest pieces, in the same order of trials) and glued._glued. */
static int
glued_run_points(const char *w, Py_ssize_t n)
{
    int count[GLUED_MAX_RUN + 1], prev[GLUED_MAX_RUN + 1];
    for (Py_ssize_t j = 0; j <= n; j++)
        count[j] = -1;
    count[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (count[i] < 0)
            continue;
        for (Py_ssize_t j = i + 1; j <= n; j++) {
            Py_ssize_t len = j - i;
            if (len < 3 && !lex_contains(&lex_function, w + i, len))
                continue;
            if (!lex_known(w + i, len))
                continue;
            if (len == 1 && (w[i] != 'i' || i > 0))
                continue;
            if (count[j] < 0 || count[i] + 1 < count[j]) {
                count[j] = count[i] + 1;
                prev[j] = (int)i;
            }
        }
    }
    if (count[n] < 2)
        return 0;
    int points = 0;
    Py_ssize_t b = n, a = prev[n]; /* the right piece w[a:b] */
    while (a > 0) {
        Py_ssize_t c = prev[a]; /* the left piece w[c:a] */
        Py_ssize_t left = a - c, right = b - a;
        if (left >= 3 && right >= 3 && !lex_contains(&lex_heads, w + c, left) &&
            !lex_contains(&lex_tails, w + a, right) &&
            (lex_contains(&lex_function, w + c, left) || lex_contains(&lex_function, w + a, right)))
            points++;
        b = a;
        a = c;
    }
    return points;
}

/* 1 lowercase ASCII letter, 2 uppercase ASCII letter, 0 any other character below 256 */
static unsigned char glued_class[256];

static void
init_glued_class(void)
{
    for (int c = 'a'; c <= 'z'; c++) {
        glued_class[c] = 1;
        glued_class[c - 'a' + 'A'] = 2;
    }
}

#define GLUED_CLASS(c) (sizeof(c) == 1 || (c) < 0x100 ? glued_class[(unsigned char)(c)] : 0)

#define GLUED_POINTS(TYPE)                                                                                             \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = 0;                                                                                              \
        while (i < n) {                                                                                                \
            while (i < n && !GLUED_CLASS(d[i]))                                                                        \
                i++;                                                                                                   \
            if (i == n)                                                                                                \
                break;                                                                                                 \
            Py_ssize_t start = i++;                                                                                    \
            int upper = 0, cls;                                                                                        \
            while (i < n && (cls = GLUED_CLASS(d[i])) != 0) {                                                          \
                upper |= cls;                                                                                          \
                i++;                                                                                                   \
            }                                                                                                          \
            Py_ssize_t len = i - start;                                                                                \
            if (len < min_run || len > max_run || (upper & 2))                                                         \
                continue;                                                                                              \
            for (Py_ssize_t k = 0; k < len; k++)                                                                       \
                word[k] = (char)(d[start + k] | 0x20);                                                                 \
            if (lex_known(word, len) || !glued_run_points(word, len))                                                  \
                continue;                                                                                              \
            PyObject *s = PyUnicode_FromStringAndSize(word, len);                                                      \
            if (s == NULL || PyList_Append(out, s) < 0) {                                                              \
                Py_XDECREF(s);                                                                                         \
                Py_DECREF(out);                                                                                        \
                return NULL;                                                                                           \
            }                                                                                                          \
            Py_DECREF(s);                                                                                              \
        }                                                                                                              \
    } while (0)

static PyObject *
glued_points(PyObject *self, PyObject *args)
{
    PyObject *text, *words, *function_words, *heads, *tails;
    Py_ssize_t min_run, max_run;
    if (!PyArg_ParseTuple(args, "UOOOOnn:glued_points", &text, &words, &function_words, &heads, &tails, &min_run,
                          &max_run))
        return NULL;
    if (min_run < 1 || max_run > GLUED_MAX_RUN) {
        PyErr_SetString(PyExc_ValueError, "glued_points: min_run >= 1 and max_run <= 64");
        return NULL;
    }
    if (lex_build(&lex_words, words) < 0 || lex_build(&lex_function, function_words) < 0 ||
        lex_build(&lex_heads, heads) < 0 || lex_build(&lex_tails, tails) < 0)
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    char word[GLUED_MAX_RUN + 1];
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        GLUED_POINTS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        GLUED_POINTS(Py_UCS2);
    else
        GLUED_POINTS(Py_UCS4);
    return out;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* splitwords: gap_counts, split_tokens, spelled_run */

/* 1 for a character of the class [^\W\d_] of a str pattern (the regex engine's Py_UNICODE_ISALNUM, not decimal, not
 * `_`): ASCII letters here, other characters below 256 by the same test */
static unsigned char gap_letter[256];
/* 1 for an ASCII letter: splitwords._TOKEN's letters */
static unsigned char ascii_letter[256];

static void
init_split_classes(void)
{
    for (int c = 0; c < 256; c++) {
        gap_letter[c] = c != '_' && Py_UNICODE_ISALNUM((Py_UCS4)c) && !Py_UNICODE_ISDECIMAL((Py_UCS4)c);
        ascii_letter[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }
}

#define GAP_LETTER(c)                                                                                                  \
    ((c) < 0x100 ? gap_letter[(unsigned char)(c)]                                                                      \
                 : (Py_UNICODE_ISALNUM((Py_UCS4)(c)) && !Py_UNICODE_ISDECIMAL((Py_UCS4)(c))))

#define GAP_COUNTS(TYPE)                                                                                               \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = 1;                                                                                              \
        while (i < n) {                                                                                                \
            if (d[i] != ' ') {                                                                                         \
                i++;                                                                                                   \
                continue;                                                                                              \
            }                                                                                                          \
            Py_ssize_t start = i;                                                                                      \
            while (i < n && d[i] == ' ')                                                                               \
                i++;                                                                                                   \
            if (!GAP_LETTER(d[start - 1]))                                                                             \
                continue;                                                                                              \
            if (i < n && GAP_LETTER(d[i])) {                                                                           \
                gaps++;                                                                                                \
                doubled += i - start == 2;                                                                             \
            }                                                                                                          \
            else if (i == start + 1 && i < n && (d[i] == ',' || d[i] == '.' || d[i] == ':' || d[i] == ';') &&         \
                     (i + 1 == n || Py_UNICODE_ISSPACE((Py_UCS4)d[i + 1])))                                            \
                marks++;                                                                                               \
        }                                                                                                              \
    } while (0)

static PyObject *
gap_counts(PyObject *self, PyObject *args)
{
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:gap_counts", &text))
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), gaps = 0, doubled = 0, marks = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        GAP_COUNTS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        GAP_COUNTS(Py_UCS2);
    else
        GAP_COUNTS(Py_UCS4);
    return Py_BuildValue("nnn", gaps, doubled, marks);
}

/* Whether the ASCII s[:n] is a member of the table's set: the table, or the set itself for a word longer than the
 * table keeps (LEX_MAX_WORD); -1 on error */
static int
lex_has(const LexTable *t, const char *s, Py_ssize_t n)
{
    if (n <= LEX_MAX_WORD)
        return lex_contains(t, s, n);
    PyObject *w = PyUnicode_FromStringAndSize(s, n);
    if (w == NULL)
        return -1;
    int found = PySet_Contains(t->set, w);
    Py_DECREF(w);
    return found;
}

/* glued.known(w, the table's set) of a lowercase ASCII word w[:n]; buf holds n + 4 characters; -1 on error */
static int
lex_known_in(const LexTable *t, const char *w, Py_ssize_t n, char *buf)
{
    int found = lex_has(t, w, n);
    if (found)
        return found;
    memcpy(buf, w, (size_t)n);
    for (size_t k = 0; k < sizeof(glued_endings) / sizeof(glued_endings[0]); k++) {
        const char *e = glued_endings[k];
        Py_ssize_t m = (Py_ssize_t)strlen(e);
        memcpy(buf + n, e, (size_t)m);
        if ((found = lex_has(t, buf, n + m)) != 0)
            return found;
        if (n > m + 2 && memcmp(w + n - m, e, (size_t)m) == 0 && (found = lex_has(t, w, n - m)) != 0)
            return found;
    }
    if (n >= 3 && memcmp(w + n - 3, "ing", 3) == 0) {
        buf[n - 3] = 'e';
        return lex_has(t, buf, n - 2);
    }
    return 0;
}

static LexTable lex_wide; /* splitwords.wide_lexicon(); glued.lexicon() shares glued_points' lex_words */

#define SPLIT_TOKENS(TYPE)                                                                                             \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = 0;                                                                                              \
        while (i < n) {                                                                                                \
            while (i < n && !(d[i] < 0x80 && ascii_letter[d[i]]))                                                      \
                i++;                                                                                                   \
            if (i == n)                                                                                                \
                break;                                                                                                 \
            Py_ssize_t start = i, at = used;                                                                           \
            int tail_upper = 0;                                                                                        \
            uint64_t h = FNV_OFFSET;                                                                                   \
            char c = (char)(d[i++] | 0x20);                                                                            \
            low[used++] = c;                                                                                           \
            h = (h ^ (unsigned char)c) * FNV_PRIME;                                                                    \
            while (i < n && d[i] < 0x80 && ascii_letter[d[i]]) {                                                       \
                tail_upper |= d[i] < 'a';                                                                              \
                c = (char)d[i++];                                                                                      \
                low[used++] = c;                                                                                       \
                h = (h ^ (unsigned char)c) * FNV_PRIME;                                                                \
            }                                                                                                          \
            Py_ssize_t len = i - start;                                                                                \
            if (tail_upper || (len == 1 && d[start] < 'a')) {                                                          \
                used = at; /* not a token: a capital after the first letter, or one capital */                        \
                continue;                                                                                              \
            }                                                                                                          \
            int added = slice_set_add_hashed(&seen, low, at, len, h);                                                  \
            if (added < 0)                                                                                             \
                goto fail;                                                                                             \
            if (!added) {                                                                                              \
                used = at;                                                                                             \
                continue;                                                                                              \
            }                                                                                                          \
            distinct++;                                                                                                \
            if (len < 2)                                                                                               \
                continue;                                                                                              \
            /* a word of either set first (most tokens), then the inflections */                                     \
            int word = lex_has(&lex_wide, low + at, len);                                                              \
            if (word == 0)                                                                                             \
                word = lex_has(&lex_words, low + at, len);                                                             \
            if (word == 0)                                                                                             \
                word = lex_known_in(&lex_wide, low + at, len, scratch);                                                \
            if (word == 0)                                                                                             \
                word = lex_known_in(&lex_words, low + at, len, scratch);                                               \
            if (word < 0)                                                                                              \
                goto fail;                                                                                             \
            if (word)                                                                                                  \
                continue;                                                                                              \
            PyObject *s = PyUnicode_FromStringAndSize(low + at, len);                                                  \
            if (s == NULL || PyList_Append(pieces, s) < 0) {                                                           \
                Py_XDECREF(s);                                                                                         \
                goto fail;                                                                                             \
            }                                                                                                          \
            Py_DECREF(s);                                                                                              \
        }                                                                                                              \
    } while (0)

static PyObject *
split_tokens(PyObject *self, PyObject *args)
{
    PyObject *text, *wide, *words;
    if (!PyArg_ParseTuple(args, "UOO:split_tokens", &text, &wide, &words))
        return NULL;
    if (lex_build(&lex_wide, wide) < 0 || lex_build(&lex_words, words) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), used = 0, distinct = 0;
    char *low = PyMem_Malloc((size_t)n + 1), *scratch = PyMem_Malloc((size_t)n + 8);
    PyObject *pieces = PyList_New(0);
    slice_set seen;
    seen.slots = NULL;
    if (low == NULL || scratch == NULL || pieces == NULL || slice_set_init(&seen) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto fail;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        SPLIT_TOKENS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        SPLIT_TOKENS(Py_UCS2);
    else
        SPLIT_TOKENS(Py_UCS4);
    slice_set_done(&seen);
    PyMem_Free(low);
    PyMem_Free(scratch);
    PyObject *out = Py_BuildValue("nN", distinct, pieces);
    return out;
fail:
    if (seen.slots != NULL)
        slice_set_done(&seen);
    PyMem_Free(low);
    PyMem_Free(scratch);
    Py_XDECREF(pieces);
    return NULL;
}

/* [\w'’-] of a str pattern: the regex engine's Py_UNICODE_ISALNUM or `_`, or `'`, `’`, `-` */
#define PIECE_EDGE(c)                                                                                                  \
    ((c) < 0x80 ? (Py_ISALNUM((unsigned char)(c)) || (c) == '_' || (c) == '\'' || (c) == '-')                         \
                : ((c) == 0x2019 || Py_UNICODE_ISALNUM((Py_UCS4)(c))))
#define LOWER(c) ((c) >= 'a' && (c) <= 'z')

static LexTable lex_pieces; /* the pieces of the last piece_pairs call */

#define PIECE_PAIRS(TYPE)                                                                                              \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        for (Py_ssize_t p = 0; p < n; p++) {                                                                           \
            TYPE c = d[p];                                                                                             \
            if (!(c < 0x80 && ascii_letter[c]) || (p > 0 && PIECE_EDGE(d[p - 1])))                                     \
                continue;                                                                                              \
            Py_ssize_t e1 = p + 1; /* group 1, [A-Za-z]?[a-z]+: the lowercase run after the first letter */          \
            while (e1 < n && LOWER(d[e1]))                                                                             \
                e1++;                                                                                                  \
            if ((!LOWER(c) && e1 == p + 1) || e1 >= n || d[e1] != ' ')                                                 \
                continue;                                                                                              \
            Py_ssize_t s2 = e1 + 1 < n && d[e1 + 1] == ' ' ? e1 + 2 : e1 + 1; /* ` {1,2}` */                          \
            if (s2 >= n || !LOWER(d[s2]))                                                                              \
                continue;                                                                                              \
            Py_ssize_t e2 = s2 + 1; /* group 2, [a-z]+ */                                                              \
            while (e2 < n && LOWER(d[e2]))                                                                             \
                e2++;                                                                                                  \
            if (e2 < n && PIECE_EDGE(d[e2]))                                                                           \
                continue;                                                                                              \
            Py_ssize_t start = p, len1 = e1 - p, len2 = e2 - s2;                                                       \
            p = s2 - 1; /* a match: the next search starts at its second piece */                                      \
            buf[0] = (char)(c | 0x20);                                                                                 \
            for (Py_ssize_t k = 1; k < len1; k++)                                                                      \
                buf[k] = (char)d[start + k];                                                                           \
            for (Py_ssize_t k = 0; k < len2; k++)                                                                      \
                buf[len1 + k] = (char)d[s2 + k];                                                                       \
            int found = lex_has(&lex_pieces, buf, len1);                                                               \
            if (found == 0)                                                                                            \
                found = lex_has(&lex_pieces, buf + len1, len2);                                                        \
            if (found < 0)                                                                                             \
                goto fail;                                                                                             \
            if (!found)                                                                                                \
                continue;                                                                                              \
            PyObject *item = Py_BuildValue("nns#s#", start, e2, buf, len1, buf + len1, len2);                          \
            if (item == NULL || PyList_Append(out, item) < 0) {                                                        \
                Py_XDECREF(item);                                                                                      \
                goto fail;                                                                                             \
            }                                                                                                          \
            Py_DECREF(item);                                                                                           \
        }                                                                                                              \
    } while (0)

static PyObject *
piece_pairs(PyObject *self, PyObject *args)
{
    PyObject *text, *pieces;
    if (!PyArg_ParseTuple(args, "UO:piece_pairs", &text, &pieces))
        return NULL;
    if (lex_build(&lex_pieces, pieces) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    char *buf = PyMem_Malloc((size_t)n + 1);
    PyObject *out = PyList_New(0);
    if (buf == NULL || out == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto fail;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        PIECE_PAIRS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        PIECE_PAIRS(Py_UCS2);
    else
        PIECE_PAIRS(Py_UCS4);
    PyMem_Free(buf);
    return out;
fail:
    PyMem_Free(buf);
    Py_XDECREF(out);
    return NULL;
}

#define SPELLED_RUN(TYPE)                                                                                              \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                           \
            TYPE c = d[i];                                                                                             \
            if (c >= 'a' && c <= 'z') {                                                                                \
                letters = after_space ? letters + 1 : 1;                                                               \
                after_space = 0;                                                                                       \
                if (letters >= count)                                                                                  \
                    Py_RETURN_TRUE;                                                                                    \
            }                                                                                                          \
            else if (c == ' ' && !after_space && letters > 0)                                                          \
                after_space = 1;                                                                                       \
            else                                                                                                       \
                letters = after_space = 0;                                                                             \
        }                                                                                                              \
    } while (0)

static PyObject *
spelled_run(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t count, letters = 0;
    int after_space = 0;
    if (!PyArg_ParseTuple(args, "Un:spelled_run", &text, &count))
        return NULL;
    if (count < 1) {
        PyErr_SetString(PyExc_ValueError, "spelled_run: count >= 1");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        SPELLED_RUN(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        SPELLED_RUN(Py_UCS2);
    else
        SPELLED_RUN(Py_UCS4);
    Py_RETURN_FALSE;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* codepages: non_ascii_runs */

#define NON_ASCII_RUNS(TYPE)                                                                                           \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        Py_ssize_t i = 0;                                                                                              \
        while (i < n) {                                                                                                \
            while (i < n && d[i] < 0x80)                                                                               \
                i++;                                                                                                   \
            Py_ssize_t start = i;                                                                                      \
            while (i < n && d[i] >= 0x80)                                                                              \
                i++;                                                                                                   \
            if (i - start >= min_len) {                                                                                \
                PyObject *item = Py_BuildValue("nn", start, i);                                                        \
                if (item == NULL || PyList_Append(out, item) < 0) {                                                    \
                    Py_XDECREF(item);                                                                                  \
                    Py_DECREF(out);                                                                                    \
                    return NULL;                                                                                       \
                }                                                                                                      \
                Py_DECREF(item);                                                                                       \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

static PyObject *
non_ascii_runs(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "Un:non_ascii_runs", &text, &min_len))
        return NULL;
    if (min_len < 1) {
        PyErr_SetString(PyExc_ValueError, "non_ascii_runs: min_len >= 1");
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (PyUnicode_IS_ASCII(text))
        return out;
    if (kind == PyUnicode_1BYTE_KIND)
        NON_ASCII_RUNS(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        NON_ASCII_RUNS(Py_UCS2);
    else
        NON_ASCII_RUNS(Py_UCS4);
    return out;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* plain_run */

static LexTable lex_salad; /* salad's function words */

static PyObject *
plain_run(PyObject *self, PyObject *args)
{
    PyObject *text, *function_words;
    if (!PyArg_ParseTuple(args, "UO:plain_run", &text, &function_words))
        return NULL;
    if (lex_build(&lex_salad, function_words) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), best = 0, run = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    char word[LEX_MAX_WORD + 1];
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (!LOWER(c)) {
            /* a space after a word keeps the run (the next character must be a letter); anything else ends it */
            if (!(c == ' ' && i > 0 && LOWER(PyUnicode_READ(kind, data, i - 1)) && i + 1 < n &&
                  LOWER(PyUnicode_READ(kind, data, i + 1))))
                run = 0;
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && LOWER(PyUnicode_READ(kind, data, i)))
            i++;
        Py_ssize_t len = i - start;
        int function = 0;
        if (len <= LEX_MAX_WORD) {
            for (Py_ssize_t k = 0; k < len; k++)
                word[k] = (char)PyUnicode_READ(kind, data, start + k);
            function = lex_contains(&lex_salad, word, len);
        }
        run = function ? 0 : run + 1;
        if (run > best)
            best = run;
    }
    return PyLong_FromSsize_t(best);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* words_over, pair_window */

#define WORDS_OVER(TYPE)                                                                                               \
    do {                                                                                                               \
        const TYPE *d = (const TYPE *)data;                                                                            \
        int in_word = 0;                                                                                               \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                           \
            int space = Py_UNICODE_ISSPACE(d[i]);                                                                      \
            if (!space && !in_word && ++count > limit)                                                                 \
                Py_RETURN_TRUE;                                                                                        \
            in_word = !space;                                                                                          \
        }                                                                                                              \
    } while (0)

static PyObject *
words_over(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t limit, count = 0;
    if (!PyArg_ParseTuple(args, "Un:words_over", &text, &limit))
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n <= limit)
        Py_RETURN_FALSE; /* a word has a character */
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND)
        WORDS_OVER(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        WORDS_OVER(Py_UCS2);
    else
        WORDS_OVER(Py_UCS4);
    Py_RETURN_FALSE;
}

/* The code of text[start:end] from `codes`, or from code_of (-1 and an exception on failure). */
static long
pair_token_code(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *codes, PyObject *code_of)
{
    PyObject *token = PyUnicode_Substring(text, start, end);
    if (token == NULL)
        return -1;
    PyObject *code = PyDict_GetItemWithError(codes, token); /* borrowed */
    if (code == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(token);
            return -1;
        }
        PyObject *made = PyObject_CallOneArg(code_of, token);
        Py_DECREF(token);
        if (made == NULL)
            return -1;
        long value = PyLong_AsLong(made);
        Py_DECREF(made);
        return value;
    }
    Py_DECREF(token);
    return PyLong_AsLong(code);
}

static PyObject *
pair_window(PyObject *self, PyObject *args)
{
    PyObject *text, *codes, *code_of;
    Py_buffer matrix, foreign;
    Py_ssize_t n_classes, window;
    if (!PyArg_ParseTuple(args, "UO!Oy*ny*n:pair_window", &text, &PyDict_Type, &codes, &code_of, &matrix,
                          &n_classes, &foreign, &window))
        return NULL;
    PyObject *out = NULL;
    double *sums = NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), pairs = 0, n_foreign = 0;
    if (matrix.len < (Py_ssize_t)sizeof(double) * n_classes * n_classes || foreign.len < n_classes || window < 1) {
        PyErr_SetString(PyExc_ValueError, "pair_window: matrix, foreign or window out of shape");
        goto done;
    }
    const double *scores = (const double *)matrix.buf;
    const unsigned char *is_foreign = (const unsigned char *)foreign.buf;
    sums = PyMem_Malloc(sizeof(double) * ((size_t)n / 2 + 2)); /* a pair needs two tokens and a space: <= n / 2 */
    if (sums == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    sums[0] = 0.0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    long prev = -1; /* the code of the previous token on the line; -1: none */
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c == '\n') {
            prev = -1;
            i++;
            continue;
        }
        if (Py_UNICODE_ISSPACE(c)) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n) {
            c = PyUnicode_READ(kind, data, i);
            if (Py_UNICODE_ISSPACE(c))
                break;
            i++;
        }
        long code = pair_token_code(text, start, i, codes, code_of);
        if (code < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "pair_window: a negative code");
            goto done;
        }
        if (code / 4 >= n_classes) {
            PyErr_SetString(PyExc_ValueError, "pair_window: a class beyond the matrix");
            goto done;
        }
        if (prev >= 0 && !(prev & 1) && !(code & 2)) {
            Py_ssize_t a = prev / 4, b = code / 4;
            n_foreign += is_foreign[a];
            sums[pairs + 1] = sums[pairs] + scores[a * n_classes + b];
            pairs++;
        }
        prev = code;
    }
    double best = 0.0;
    if (pairs > 0) {
        if (pairs <= window)
            best = sums[pairs];
        else {
            best = sums[window] - sums[0];
            for (Py_ssize_t k = 1; k + window <= pairs; k++) {
                double v = sums[k + window] - sums[k];
                if (v < best)
                    best = v;
            }
        }
    }
    out = Py_BuildValue("nnd", pairs, n_foreign, best);
done:
    PyMem_Free(sums);
    PyBuffer_Release(&matrix);
    PyBuffer_Release(&foreign);
    return out;
}

static PyMethodDef methods[] = {
    {"any_in", any_in, METH_VARARGS, "Whether a character of text lies in [low, high]."},
    {"non_ascii_words", non_ascii_words, METH_VARARGS, "bytelevel.non_ascii_words as a list (see the source)."},
    {"repeated_char", repeated_char, METH_VARARGS, "Whether a character of chars stands length times in a row."},
    {"ascii_code_hint", ascii_code_hint, METH_VARARGS, "degeneracy._code_hint of an ASCII line."},
    {"region_at", region_at, METH_VARARGS, "(start, end) of repetition._region_at (see the source)."},
    {"may_repeat", may_repeat, METH_VARARGS, "degeneracy._may_repeat (see the source)."},
    {"identifier_tokens", identifier_tokens, METH_VARARGS, "identifiers.tokens of a text (see the source)."},
    {"window_counts", window_counts, METH_VARARGS, "Counts of a token window for degeneracy.prose_degenerate."},
    {"spaced_chunks", spaced_chunks, METH_VARARGS, "Characters other than space, newline, tab, CR; long chunks."},
    {"unknown_marked", unknown_marked, METH_VARARGS, "The tokens that identifiers._check looks up (see the source)."},
    {"written_lookups", written_lookups, METH_VARARGS, "identifiers._check's look-ups of a written set (see the source)."},
    {"index_add", index_add, METH_VARARGS, "IdentifierIndex.add (see the source)."},
    {"segment_keys", segment_keys, METH_VARARGS, "The counts of neardup._keys_may_repeat (see the source)."},
    {"recurring_anchors", recurring_anchors, METH_VARARGS,
     "[(a, j) for a in anchors if a > length and (j := text.rfind(text[a - length:a], max(0, a - back), a - 1)) >= 0]"},
    {"last_tokens", last_tokens, METH_VARARGS, "The loop of eval.classify.degeneracy._last_tokens (see the source)."},
    {"glued_points", glued_points, METH_VARARGS, "The runs of glued._glued_candidates_python (see the source)."},
    {"gap_counts", gap_counts, METH_VARARGS, "The gaps of splitwords.spaced_gaps (see the source)."},
    {"split_tokens", split_tokens, METH_VARARGS, "The tokens and pieces of splitwords.split_pieces (see the source)."},
    {"piece_pairs", piece_pairs, METH_VARARGS, "The pairs of splitwords._piece_pairs (see the source)."},
    {"non_ascii_runs", non_ascii_runs, METH_VARARGS, "(start, end) of each run of min_len+ non-ASCII characters."},
    {"spelled_run", spelled_run, METH_VARARGS, "Whether count lowercase ASCII letters stand one space apart."},
    {"plain_run", plain_run, METH_VARARGS, "The longest run of salad.content_run's plain words (see the source)."},
    {"words_over", words_over, METH_VARARGS, "Whether text has more than limit words between whitespace."},
    {"pair_window", pair_window, METH_VARARGS, "The pairs and window sums of wordpairs.implausible_pairs (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_speedups", "Optional compiled helpers of eval.classify (issue 30, speed).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_classes();
    init_keep();
    init_glued_class();
    init_split_classes();
    PyObject *m = PyModule_Create(&module);
    /* eval.classify.compiled.SPEEDUPS_API: a module built from another version of this file is not used */
    if (m != NULL && PyModule_AddIntConstant(m, "API", 10) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
