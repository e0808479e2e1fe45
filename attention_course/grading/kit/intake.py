"""From what an instructor downloaded to one submission per student: the roster, folders, Canvas and Moodle zips.

The layouts understood:

- a notebook: one submission;
- a folder of student folders (`alice/03_softmax.ipynb`, ...): one submission per
  subfolder; notebooks directly inside it are one submission each;
- one student's folder (notebooks only, each named after its exercise:
  `03_softmax.ipynb`, `03_softmax (1).ipynb`): one submission;
- Canvas's "Download Submissions" zip (or its unpacked folder): files named
  `<name>_<user id>_<attachment id>_<file>`, with `late_` before the user id
  when Canvas marked the submission late, and `-1`, `-2` after the file name
  for resubmissions;
- Moodle's "Download all submissions" zip: files named
  `<Full Name>_<participant id>_assignsubmission_file_<file>`, or folders named
  `<Full Name>_<participant id>_assignsubmission_file_` with the files inside.

A zip a student handed in (their notebooks zipped) is unpacked too, one
level deep. Zips are unpacked safely into a folder of the caller's: no entry outside it
(absolute paths, `..`, links, entries held twice or that the file system refuses are
refused and reported), and limits on the
number of entries, each file's size and the total, counted on the bytes
actually written, so a zip bomb stops at the limit.

With a roster (CSV, comma-, semicolon- or tab-separated, column names in any case: `student_id,name` and optionally `email`, `submission`
(the folder or LMS name their work arrives under), `canvas_id`,
`sis_user_id`, `sis_login_id`, `section`, `moodle_id`) each submission is
matched to a student by LMS id, then by that name, then by the student's name.
Nothing is resolved silently: two submissions for one student are graded
together and reported as duplicates (the best notebook per exercise counts,
the others are listed), a submission that matches nobody gets a row marked
"not on the roster", a student with nothing submitted gets a row marked "no
submission", and every file that is not a notebook is listed as ignored.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..checks.exercises import EXERCISES
from .status import Incident, Status

ROSTER_COLUMNS = ("student_id", "name", "email", "submission", "canvas_id", "sis_user_id", "sis_login_id",
                  "section", "moodle_id")
"""The roster's columns; student_id and name are required."""

CANVAS_NAME = re.compile(r"^(?P<slug>[^_/]+)_(?:(?P<late>late)_)?(?P<user>[1-9]\d*)_(?P<attachment>[1-9]\d*)_(?P<file>.+)$",
                         re.IGNORECASE)
"""A file of Canvas's download: name, `late_` if late, user id, attachment id, the student's file name."""
MOODLE_NAME = re.compile(r"^(?P<name>.+?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)$")
"""A file or folder of Moodle's download: full name, participant id, the submission plugin, the student's file name."""


UNPACKED_MARK = ".unpacked-by-attention-course"
"""A file in each folder a zip was unpacked into: the next run may replace that folder, and no other."""
DUPLICATE_SUBMISSIONS = "duplicate submissions"
"""How the sentence about a student's several submissions starts."""


@dataclass(frozen=True)
class ZipLimits:
    """How much a submissions zip may unpack to."""

    entries: int = 20_000
    """Files and folders in the zip."""
    file_bytes: int = 64 << 20
    """The largest file once unpacked."""
    total_bytes: int = 1 << 30
    """Everything unpacked together."""


class IntakeError(ValueError):
    """A roster or a zip that cannot be used; the message says which file and why."""


@dataclass
class Submission:
    """One row of the gradebook: a notebook, or a student's folder of notebooks."""

    name: str
    """Shown in the gradebook: the student's name from the roster, else the notebook's or the folder's name."""
    path: str
    """The file or folder graded (several, separated by "; ", when a student's work came in more than one)."""
    notebooks: list[Path]
    """The notebooks it holds."""
    is_folder: bool = False
    """A student's folder (or LMS submission) rather than a single notebook."""
    student: dict[str, str] = field(default_factory=dict)
    """The roster's entry (student_id, name, email, LMS ids), empty when there is no roster or no match."""
    submitted: str | None = None
    """When it was submitted (ISO 8601), if known: the latest modification time of its files."""
    marked_late: bool = False
    """The LMS marked it late (Canvas's `late` in the file name)."""
    issues: list[Incident] = field(default_factory=list)
    """What intake found and did not resolve by itself (duplicates, ignored files, no match on the roster), each with
    its kind."""
    order: int = 0
    """Its place in the whole class's gradebook (shards and regrades keep it)."""

    @property
    def key(self) -> str:
        """What identifies the row when gradebooks are merged: the student id, else the name."""
        return self.student.get("student_id") or self.name




def collect(paths: list[str | Path]) -> list[Submission]:
    """Submissions from command-line paths, without a roster (what `attention-course check` grades).

    A notebook is one submission; a folder is opened, each notebook directly
    inside it is one submission and each subfolder is one (a student's
    folder). FileNotFoundError if a path is missing.
    """
    submissions = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            submissions.append(Submission(path.stem, str(path), [path]))
        elif path.is_dir():
            for child in sorted(path.iterdir()):
                if child.name.startswith("."):
                    continue
                if child.is_dir():
                    notebooks = sorted(p for p in child.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
                    submissions.append(Submission(child.name, str(child), notebooks, is_folder=True))
                elif child.suffix == ".ipynb":
                    submissions.append(Submission(child.stem, str(child), [child]))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return submissions


@dataclass
class Source:
    """One student's work as it arrived: a folder, a notebook, or the files of one LMS submission."""

    label: str
    """The folder's or the LMS's name for it."""
    files: list[Path] = field(default_factory=list)
    """Every file in it."""
    canvas_id: str = ""
    """Canvas user id, from the file names."""
    moodle_id: str = ""
    """Moodle participant id, from the file names."""
    marked_late: bool = False
    """Canvas marked it late."""
    where: str = ""
    """The path shown in the gradebook."""
    is_folder: bool = True
    """A folder or LMS submission, rather than a single notebook given on its own."""
    timed: bool = True
    """Its files' modification times are when they were submitted (not so for files unpacked from a zip)."""
    notes: list[str] = field(default_factory=list)
    """What intake did to it (a zip the student handed in, unpacked)."""


@dataclass
class Intake:
    """The submissions to grade, and what intake had to report."""

    submissions: list[Submission]
    """One per student (roster order, then the unmatched), or per source without a roster."""
    notes: list[str] = field(default_factory=list)
    """What was wrong with the download itself (zip entries refused, files of no student), beside each
    submission's own issues."""


# ---------------------------------------------------------------------------------------------- the roster


def read_roster(path: Path | str) -> list[dict[str, str]]:
    """The roster's rows as dicts with every column of ROSTER_COLUMNS (missing ones empty); IntakeError if invalid."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is fine
    except FileNotFoundError:
        raise IntakeError(f"no roster file {path}") from None
    except UnicodeDecodeError:
        raise IntakeError(f"the roster {path} is not UTF-8 text; save it as CSV UTF-8") from None
    lines = text.splitlines()
    reader = csv.DictReader(lines, dialect=_dialect(text))
    reader.fieldnames = [c.strip().lower() for c in reader.fieldnames or []]  # " Student_ID " is student_id
    columns = reader.fieldnames
    missing = [c for c in ("student_id", "name") if c not in columns]
    if missing:
        raise IntakeError(f"the roster {path} has no column {missing[0]!r}; its header must name the columns "
                          f"{', '.join(ROSTER_COLUMNS)} (student_id and name required), got {', '.join(columns) or 'nothing'}")
    unknown = [c for c in columns if c not in ROSTER_COLUMNS]
    if unknown:
        raise IntakeError(f"the roster {path} has an unknown column {unknown[0]!r}; the columns are {', '.join(ROSTER_COLUMNS)}")
    rows, seen = [], {}
    for line, raw in enumerate(reader, start=2):
        entry = {c: (raw.get(c) or "").strip() for c in ROSTER_COLUMNS}
        if not any(entry.values()):
            continue
        if not entry["student_id"] or not entry["name"]:
            raise IntakeError(f"the roster {path}, line {line}: student_id and name must not be empty")
        if entry["student_id"] in seen:
            raise IntakeError(f"the roster {path}, line {line}: student_id {entry['student_id']!r} is already on line "
                              f"{seen[entry['student_id']]}")
        seen[entry["student_id"]] = line
        rows.append(entry)
    if not rows:
        raise IntakeError(f"the roster {path} lists no students")
    return rows


def _dialect(text: str):
    """The roster's CSV dialect, as `csv.Sniffer` finds it: commas, or the semicolons or tabs a spreadsheet set to
    another locale writes (plain commas if it cannot tell, say for a single column)."""
    try:
        return csv.Sniffer().sniff(text[:1 << 16], delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _shown(name: str) -> str:
    """A name taken from a file name, without the control and bidirectional characters that could disguise it."""
    return "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf")).strip() or "?"


def _norm(text: str) -> str:
    """A name reduced to lower-case letters and digits, accents removed: "Müller, Anna" -> "mulleranna"."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.lower())


def _name_keys(name: str) -> set[str]:
    """The forms a student's name takes in folder and LMS names: "Anna Müller", "mullerannna" (Canvas: last name first)."""
    words = re.split(r"[\s,]+", name.strip())
    keys = {_norm(name)}
    if len(words) > 1:
        keys.add(_norm("".join(words[-1:] + words[:-1])))  # Canvas: last name, then the others
    return keys - {""}


# ---------------------------------------------------------------------------------------------- zips


def unpack(zip_path: Path, dest: Path, limits: ZipLimits = ZipLimits()) -> tuple[list[Path], list[str]]:
    """Unpack a zip into `dest` safely; returns the files written and notes on the entries refused.

    IntakeError if the zip cannot be read or would unpack beyond `limits`.
    """
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as err:
        raise IntakeError(f"{zip_path} is not a zip file that can be read: {err}") from None
    written, notes, total, seen = [], [], 0, set()
    dest = dest.resolve()
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.entries:
            raise IntakeError(f"{zip_path} holds {len(infos)} entries, more than the limit of {limits.entries}")
        for info in infos:
            name = info.filename.replace("\\", "/")
            parts = PurePosixPath(name).parts
            mode = info.external_attr >> 16
            if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts:
                notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it points outside the folder")
                continue
            if stat.S_ISLNK(mode):
                notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it is a link")
                continue
            target = dest.joinpath(*parts)
            try:
                if not target.resolve().is_relative_to(dest):
                    notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it points outside the folder")
                    continue
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if target in seen:
                    notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: the zip holds it twice; "
                                 "the first copy was kept")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                out = open(target, "wb")
            except OSError as err:  # a name too long, a file where a folder should be, ...
                notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it cannot be written here "
                             f"({err.strerror or err})")
                continue
            seen.add(target)
            size = 0
            with archive.open(info) as src, out:
                while chunk := src.read(1 << 20):
                    size += len(chunk)
                    total += len(chunk)
                    if size > limits.file_bytes:
                        raise IntakeError(f"{zip_path}: {info.filename} unpacks to more than {limits.file_bytes >> 20} MiB, "
                                          "the limit for one file; is it a zip bomb?")
                    if total > limits.total_bytes:
                        raise IntakeError(f"{zip_path} unpacks to more than {limits.total_bytes >> 20} MiB, the limit "
                                          "for one download; is it a zip bomb?")
                    out.write(chunk)
            written.append(target)
    return written, notes


# ---------------------------------------------------------------------------------------------- layouts


def _lms_sources(files: list[Path], root: Path) -> tuple[list[Source], list[str]] | None:
    """Group the files of an unpacked LMS download by submission, with notes on stray files; None if not one."""
    canvas, moodle = {}, {}
    loose = []
    for path in files:
        rel = path.relative_to(root)
        top = rel.parts[0]
        if _junk(rel):
            continue
        m = MOODLE_NAME.match(top)
        if m:
            source = moodle.setdefault(m["participant"], Source(_shown(m["name"]), moodle_id=m["participant"], timed=False,
                                                                  where=f"{root.name}/{_shown(m['name'])}_{m['participant']}"))
            source.files.append(path)
            continue
        m = CANVAS_NAME.match(top) if len(rel.parts) == 1 else None
        if m:
            source = canvas.setdefault(m["user"], Source(_shown(m["slug"]), canvas_id=m["user"], timed=False,
                                                         where=f"{root.name}/{_shown(m['slug'])}_{m['user']}"))
            source.files.append(path)
            source.marked_late |= bool(m["late"])
            continue
        loose.append(path)
    matched = sum(len(x.files) for x in [*canvas.values(), *moodle.values()])
    if not matched or len(loose) > matched:  # a few names that look like an LMS's do not make a download
        return None
    return list(canvas.values()) + list(moodle.values()), _stray(loose, root)


def _stray(files: list[Path], root: Path) -> list[str]:
    """Notes on files that belong to no student's submission."""
    return [f"{root.name}: ignored {p.relative_to(root)}: it belongs to no student's submission" for p in files]


def _junk(rel: Path) -> bool:
    """Files that archivers and Jupyter add on their own: __MACOSX/, .DS_Store, checkpoints."""
    return any(p == "__MACOSX" or p == ".ipynb_checkpoints" or p == ".DS_Store" for p in rel.parts)


def _exercise_named(path: Path) -> bool:
    return any(path.stem.startswith(e.id) for e in EXERCISES)


def _folder_sources(folder: Path) -> tuple[list[Source], list[str]]:
    """A folder given on the command line: an LMS download, one student's folder, or a folder of them."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    lms = _lms_sources(files, folder)
    if lms is not None:
        return lms
    children = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    subfolders = [c for c in children if c.is_dir() and c.name != "__MACOSX"]
    notebooks = [c for c in children if c.is_file() and c.suffix == ".ipynb"]
    if not subfolders and notebooks and all(_exercise_named(n) for n in notebooks):
        return [Source(folder.name, [c for c in children if c.is_file()], where=str(folder))], []
    sources = [Source(d.name, sorted(p for p in d.rglob("*") if p.is_file() and not _junk(p.relative_to(d))),
                      where=str(d)) for d in subfolders]
    sources += [Source(n.stem, [n], where=str(n), is_folder=False) for n in notebooks]
    others = [c for c in children if c.is_file() and c.suffix != ".ipynb"]
    return sources, _stray(others, folder)


def _single_folder(dest: Path) -> Path:
    """The folder a zip holds, when it holds one folder and nothing else (a zipped `submitted/`); else `dest`."""
    entries = [c for c in dest.iterdir() if not c.name.startswith(".") and c.name != "__MACOSX"]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest


def sources_from(paths: list[Path | str], workdir: Path, limits: ZipLimits = ZipLimits()) -> tuple[list[Source], list[str]]:
    """Every source in the command-line paths, zips unpacked under `workdir`; and notes on refused and stray files."""
    sources, notes = [], []
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.suffix.lower() == ".zip":
            dest = (workdir / path.stem).resolve()
            if dest.exists():
                if not (dest / UNPACKED_MARK).exists():
                    raise IntakeError(f"{dest} already exists and was not unpacked by the grader; move it away "
                                      "or choose another --out-dir")
                shutil.rmtree(dest)  # an earlier run's copy of this zip
            files, refused = unpack(path, dest, limits)
            (dest / UNPACKED_MARK).write_text(f"unpacked from {path.resolve()}\n")
            notes += refused
            found, stray = _lms_sources(sorted(files), dest) or _folder_sources(_single_folder(dest))
            for source in found:
                source.timed = False  # unpacked files carry the time of unpacking, not of submission
            sources += found
            notes += stray
        elif path.is_file():
            sources.append(Source(path.stem, [path], where=str(path), is_folder=False))
        elif path.is_dir():
            found, stray = _folder_sources(path)
            sources += found
            notes += stray
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return sources, notes


# ---------------------------------------------------------------------------------------------- matching


def _submission(label: str, group: list[Source], student: dict[str, str], order: int) -> Submission:
    notebooks = sorted({p for s in group for p in s.files if p.suffix == ".ipynb"}, key=str)
    issues = [Incident(n) for s in group for n in s.notes]  # remarks: a zip they handed in, unpacked
    if len(group) > 1:
        issues.append(Incident(f"{DUPLICATE_SUBMISSIONS}: " + " and ".join(s.where for s in group)
                               + "; all were graded, the best notebook for each exercise counts", Status.DUPLICATES))
    for s in group:
        for p in s.files:
            if p.suffix != ".ipynb":
                issues.append(Incident(f"ignored {p.name}: not a notebook", Status.IGNORED_FILES))
    times = [p.stat().st_mtime for p in notebooks]
    submitted = (dt.datetime.fromtimestamp(max(times), dt.timezone.utc).isoformat(timespec="seconds")
                 if times and all(s.timed for s in group) else None)
    return Submission(label, "; ".join(s.where for s in group), notebooks,
                      is_folder=any(s.is_folder for s in group) or len(notebooks) > 1, student=student,
                      submitted=submitted, marked_late=any(s.marked_late for s in group), issues=issues, order=order)


def match(sources: list[Source], roster: list[dict[str, str]] | None) -> list[Submission]:
    """One submission per student (see the module docstring); without a roster, one per name."""
    if roster is None:
        groups: dict[str, list[Source]] = {}
        for s in sources:
            groups.setdefault(_norm(s.label) or s.label, []).append(s)
        return [_submission(g[0].label, g, {}, i) for i, g in enumerate(groups.values())]
    by_canvas = {r["canvas_id"]: r for r in roster if r["canvas_id"]}
    by_moodle = {r["moodle_id"]: r for r in roster if r["moodle_id"]}
    by_name: dict[str, list[dict]] = {}
    for r in roster:
        for key in ({_norm(r["submission"])} if r["submission"] else set()) | _name_keys(r["name"]):
            by_name.setdefault(key, []).append(r)
    matched: dict[str, list[Source]] = {}
    unmatched: list[Source] = []
    for s in sources:
        student = by_canvas.get(s.canvas_id) or by_moodle.get(s.moodle_id)
        if student is None:
            candidates = {r["student_id"]: r for r in by_name.get(_norm(s.label), [])}
            student = next(iter(candidates.values())) if len(candidates) == 1 else None
        if student is None:
            unmatched.append(s)
        else:
            matched.setdefault(student["student_id"], []).append(s)
    out = []
    for i, r in enumerate(roster):
        group = matched.get(r["student_id"], [])
        sub = _submission(r["name"], group, r, i)
        if not group:
            sub.path = ""
        out.append(sub)
    for j, s in enumerate(unmatched):
        sub = _submission(s.label, [s], {}, len(roster) + j)
        sub.issues.insert(0, Incident(f"{Status.NOT_ON_ROSTER}: no student matches {s.where!r} (by LMS id, submission "
                                      "name or name)", Status.NOT_ON_ROSTER))
        out.append(sub)
    return out


def intake(paths: list[Path | str], workdir: Path, roster: Path | str | None = None,
           limits: ZipLimits = ZipLimits()) -> Intake:
    """The submissions to grade from command-line paths and an optional roster CSV."""
    rows = read_roster(roster) if roster is not None else None
    sources, notes = sources_from(paths, workdir, limits)
    for i, source in enumerate(sources):
        notes += _unpack_handed_in_zips(source, workdir / "handed-in-zips" / f"{i}-{_norm(source.label) or 'x'}", limits)
    return Intake(match(sources, rows), notes)


def _unpack_handed_in_zips(source: Source, dest: Path, limits: ZipLimits) -> list[str]:
    """A zip a student handed in (their notebooks zipped): unpacked, one level, safely, its files added to theirs."""
    notes = []
    for archive in [p for p in source.files if p.suffix.lower() == ".zip"]:
        target = dest / archive.stem
        if target.exists():
            shutil.rmtree(target)
        try:
            files, refused = unpack(archive, target, limits)
        except IntakeError as err:
            source.notes.append(f"could not unpack {archive.name}: {err}")
            continue
        source.files.remove(archive)
        source.files += [f for f in sorted(files) if not _junk(f.relative_to(target))]
        source.timed = False
        source.notes.append(f"unpacked {archive.name}, which they handed in")
        notes += refused
    return notes

