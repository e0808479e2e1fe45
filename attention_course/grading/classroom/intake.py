"""From what an instructor downloaded to one submission per student: folders, Canvas and Moodle zips.

The layouts understood:

- a notebook: one submission;
- a folder of student folders (`alice/03_softmax.ipynb`, ...): one submission per
  subfolder; notebooks directly inside it are one submission each;
- one student's folder (notebooks only, each named after its exercise:
  `03_softmax.ipynb`, `03_softmax (1).ipynb`): one submission;
- Canvas's "Download Submissions" zip (or its unpacked folder): files named
  `<name>_<user id>_<attachment id>_<file>`, with `LATE` (or `late`) before
  the user id when Canvas marked the submission late, `-1`, `-2` after the
  file name for a file uploaded again, and `anon_<anonymous id>` in place of
  the name and user id under anonymous grading;
- Moodle's "Download all submissions" zip: files named
  `<Full Name>_<participant id>_assignsubmission_file_<file>`, or folders named
  `<Full Name>_<participant id>_assignsubmission_file_` with the files inside.

Zips are unpacked safely into a folder of the caller's: no entry outside it
(absolute paths, `..`, links, entries held twice or that the file system refuses are
refused and reported), and limits on the number of entries and the total,
counted on the entries' stated sizes (zipfile reads no more than it states,
so a zip bomb stops at the limit): notebooks are kept first, and what
would pass a limit (a student's video or data set) is left out with a note
naming it, the rest of the class unpacked and graded. A file over the limit
for one file is not unpacked, and an empty file of its size stands in for it
(its notebook is then reported as too large). Names a zip stores without its UTF-8 flag are read as UTF-8 when
they are valid UTF-8. The files of an LMS zip are then moved into a folder per
submission under the student's own file names (`lovelaceada_50/03_softmax.ipynb`),
so that the grader, the gradebook and the feedback see the names the student gave.
A zip a student handed in (their notebooks zipped) is unpacked too, one level deep.

With a roster (`roster.py`: the course's CSV, Canvas's gradebook export or
Moodle's grading worksheet) each submission is matched to a student by the LMS
id its download gives, then by its name with `people.Matcher`, as every other
name the grader is given (any key of the roster: an id, an e-mail, a name in
either order, a folder the grader wrote); a name that fits two students is
refused, naming them. Canvas's Test Student is left out, named once
(`Intake.left_out`). Nothing is resolved silently: two submissions for one student are graded together and
reported as duplicates (the best notebook per exercise counts, the others are
listed), a submission that matches nobody gets a row marked "not on the
roster", a student with nothing submitted gets a row marked "no submission",
and every file that is not a notebook is listed as ignored. An anonymous
download (Canvas's anonymous grading) is graded under its anonymous ids, one
row each: the roster cannot name them. A submission-times file, where given,
says when each student submitted; else Moodle's worksheet, given as the
roster; else the download (Canvas's late marks) or the files' modification
times. Each submission says which (`Submission.timing`): a regrade keeps the
earlier time unless the new one brings its own (`OWN_TIME`).
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import stat
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Mapping

from ..checks.exercises import EXERCISES
from .people import Found, Matcher, Outcome, Person, is_test_student, plain
from .roster import MOODLE_SUBMITTED, ClassRecords, IntakeError
from ..run.status import Incident, Status

__all__ = ["IntakeError", "Intake", "Submission", "ZipLimits", "collect", "intake", "unpack"]

CANVAS_NAME = re.compile(r"^(?P<slug>[^_/]+)_(?:(?P<late>late)_)?(?P<user>[1-9]\d*)_(?P<attachment>[1-9]\d*)_(?P<file>.+)$",
                         re.IGNORECASE)
"""A file of Canvas's download: name, `LATE` if late, user id, attachment id, the student's file name."""
CANVAS_ANONYMOUS = re.compile(r"^(?:(?P<late>late)_)?anon_(?P<anonymous>[A-Za-z0-9]+)_(?P<attachment>[1-9]\d*)_(?P<file>.+)$",
                              re.IGNORECASE)
"""A file of Canvas's download under anonymous grading: `LATE` if late, `anon_` and the anonymous id, ..."""
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


class Timing(StrEnum):
    """Where a submission's time (or its late mark) came from: a regrade keeps the earlier time unless the new
    submission brings its own (`OWN_TIME`)."""

    TIMES_FILE = "the submission-times file"
    WORKSHEET = "Moodle's grading worksheet"
    LMS_MARK = "Canvas's late mark"
    FILES = "the files' modification times"
    NONE = "nothing"


OWN_TIME = (Timing.TIMES_FILE, Timing.WORKSHEET, Timing.LMS_MARK)
"""What says when a submission was made, as against files copied about (their modification times) or nothing."""


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
    """When it was submitted (ISO 8601), if known: the submission-times file's, else the latest modification time of
    its files (never for files unpacked from a zip)."""
    marked_late: bool = False
    """The LMS marked it late (Canvas's `LATE` in the file names)."""
    issues: list[Incident] = field(default_factory=list)
    """What intake found and did not resolve by itself (duplicates, ignored files, no match on the roster), each with
    its kind."""
    order: int = 0
    """Its place in the whole class's gradebook (shards and regrades keep it)."""
    ignored: list[str] = field(default_factory=list)
    """The names of its files that are not notebooks (each also an issue)."""
    lms: dict[str, str] = field(default_factory=dict)
    """What the download said of it: `canvas_id`, `canvas_attachment` (an attachment id of its files, which
    Canvas's re-upload of feedback needs), `canvas_name`, `anonymous_id`, `moodle_id`, `moodle_name`."""
    timing: Timing = Timing.NONE
    """Where `submitted` (or `marked_late`) came from."""
    label: str = ""
    """The folder's or the LMS's name for the work, as it arrived (what matched the student, or did not)."""

    @property
    def key(self) -> str:
        """What identifies the row when gradebooks are merged: the student id, else the anonymous id, else the name."""
        if self.student.get("student_id"):
            return self.student["student_id"]
        return f"anon_{self.lms['anonymous_id']}" if self.lms.get("anonymous_id") else self.name


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
    lms: dict[str, str] = field(default_factory=dict)
    """What the LMS's file names said of it (see `Submission.lms`)."""
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
    own: dict[Path, str] = field(default_factory=dict)
    """Each file's path under the submission as the student named it, for the files of an LMS download."""


@dataclass
class Intake:
    """The submissions to grade, and what intake had to report."""

    submissions: list[Submission]
    """One per student (roster order, then the unmatched), or per source without a roster."""
    notes: list[str] = field(default_factory=list)
    """What was wrong with the download itself (zip entries refused, files of no student, an empty zip), beside
    each submission's own issues."""
    lateness: str = ""
    """Where lateness comes from, for the summary: the download's late marks, times, or nothing."""
    roster: str = ""
    """The form of the roster ("roster", "Canvas gradebook export", "Moodle grading worksheet"), "" without one."""
    left_out: list[str] = field(default_factory=list)
    """Who was left out of every file as no student of the class (Canvas's Test Student), said once."""


# ---------------------------------------------------------------------------------------------- names


def _shown(name: str) -> str:
    """A name taken from a file name, without the control and bidirectional characters that could disguise it."""
    return "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf")).strip() or "?"


# ---------------------------------------------------------------------------------------------- zips


def unpack(zip_path: Path, dest: Path, limits: ZipLimits = ZipLimits()) -> tuple[list[Path], list[str]]:
    """Unpack a zip into `dest` safely; returns the files written and notes on the entries refused or left out.

    Notebooks are kept first, then zips, then the other files: an entry past `limits.entries`, or one whose size
    would take the whole past `limits.total_bytes` (a student's video or data set), is left out with a note naming it
    and why, and the rest is unpacked. IntakeError only if the zip cannot be read at all.
    """
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as err:
        raise IntakeError(f"{zip_path} is not a zip file that can be read: {err}") from None
    written, notes, seen = [], [], set()
    dest = dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)  # even for a zip of nothing
    with archive:
        infos = archive.infolist()
        admitted = _admitted(zip_path.name, infos, limits, notes)
        for info in infos:  # in the zip's order: of a file and a folder of the same name, the first wins
            if not info.is_dir() and id(info) not in admitted:
                continue
            target = _entry_target(zip_path, info, dest, seen, notes)
            if target is not None and _write_entry(archive, info, target, limits, notes, zip_path.name):
                seen.add(target)
                written.append(target)
    return written, notes


def _admitted(zip_name: str, infos: list[zipfile.ZipInfo], limits: ZipLimits, notes: list[str]) -> set[int]:
    """The ids of the file entries unpacked: notebooks first, then zips, then the rest, while their number and their
    stated sizes (zipfile reads no more than an entry states) stay within `limits`; a note names each left out."""
    files = sorted((i for i in infos if not i.is_dir()), key=_unpack_order)
    if len(files) > limits.entries:
        left = files[limits.entries:]
        notes.append(f"{zip_name}: holds {len(files)} files, more than the {limits.entries} unpacked from one download: "
                     f"{len(left)} were not unpacked ({_some(i.filename for i in left)}); notebooks were kept first")
        files = files[:limits.entries]
    admitted, total = set(), 0
    for info in files:
        cost = min(info.file_size, limits.file_bytes)  # a larger file is not unpacked: a sparse stand-in
        if total + cost > limits.total_bytes:
            notes.append(f"{zip_name}: {info.filename} ({info.file_size / (1 << 20):,.1f} MiB) was not unpacked: with "
                         f"it, the download would unpack to more than {limits.total_bytes >> 20} MiB, the limit for "
                         "one download (notebooks are kept first)")
            continue
        total += cost
        admitted.add(id(info))
    return admitted


def _unpack_order(info: zipfile.ZipInfo) -> int:
    """Notebooks, then zips (a student's notebooks zipped), then the rest: what a class's limits leave out is what
    grading needs least."""
    name = info.filename.lower()
    return 0 if name.endswith(".ipynb") else 1 if name.endswith(".zip") else 2


def _some(names, shown: int = 3) -> str:
    names = list(names)
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _entry_target(zip_path: Path, info: zipfile.ZipInfo, dest: Path, seen: set, notes: list[str]) -> Path | None:
    """Where a file entry goes under `dest` (its folders made), or None: a folder (made), or an entry refused (with a
    note)."""
    name = _entry_name(info).replace("\\", "/")
    parts = PurePosixPath(name).parts
    mode = info.external_attr >> 16
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts:
        notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it points outside the folder")
        return None
    if stat.S_ISLNK(mode):
        notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it is a link")
        return None
    target = dest.joinpath(*parts)
    try:
        if not target.resolve().is_relative_to(dest):
            notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it points outside the folder")
            return None
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            return None
        if target in seen:
            notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: the zip holds it twice; "
                         "the first copy was kept")
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a name too long, a file where a folder should be, ...
        notes.append(f"{zip_path.name}: refused the entry {info.filename!r}: it cannot be written here "
                     f"({err.strerror or err})")
        return None
    return target


def _write_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, limits: ZipLimits,
                 notes: list[str], zip_name: str) -> bool:
    """Unpack one entry into `target` (a sparse stand-in if it is over the limit for one file); False, with a note and
    nothing left, if the zip's data for it cannot be read."""
    try:
        out = open(target, "wb")
    except OSError as err:  # a name too long, a file where a folder should be, ...
        notes.append(f"{zip_name}: refused the entry {info.filename!r}: it cannot be written here "
                     f"({err.strerror or err})")
        return False
    size = 0
    try:
        with archive.open(info) as src, out:
            while chunk := src.read(1 << 20):
                size += len(chunk)
                if size > limits.file_bytes:  # one student's file: the others' are still unpacked
                    _stand_in(out, max(size, info.file_size))
                    notes.append(f"{zip_name}: {info.filename} unpacks to more than {limits.file_bytes >> 20} "
                                 "MiB, the limit for one file: it was not unpacked (an empty file of its size stands "
                                 "in for it, and is reported as too large)")
                    break
                out.write(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, zlib.error) as err:
        target.unlink(missing_ok=True)
        notes.append(f"{zip_name}: {info.filename} could not be unpacked ({err}): it was left out")
        return False
    return True


def _stand_in(out, size: int) -> None:
    """Make `out` an empty (sparse) file of `size` bytes, or as near as the file system allows: what is said of a file
    too large to unpack (its size) stays true, at no cost in disk space."""
    out.truncate(0)
    try:
        out.truncate(min(size, 1 << 40))
    except OSError:
        out.truncate(1 << 31)


def _entry_name(info: zipfile.ZipInfo) -> str:
    """An entry's name: zipfile reads names without the UTF-8 flag as cp437, but most tools that leave the flag out
    (Windows' own zips, older LMS versions) wrote UTF-8: taken as UTF-8 when the bytes are valid UTF-8."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


# ---------------------------------------------------------------------------------------------- layouts


def _lms_sources(files: list[Path], root: Path) -> tuple[list[Source], list[str]] | None:
    """Group the files of an unpacked LMS download by submission, with notes on stray files; None if not one."""
    sources: dict[tuple[str, str], Source] = {}
    loose = []
    for path in files:
        rel = path.relative_to(root)
        top = rel.parts[0]
        if _junk(rel):
            continue
        m = MOODLE_NAME.match(top)
        if m:
            name, participant = _shown(m["name"]), m["participant"]
            source = sources.setdefault(("moodle", participant), Source(
                name, lms={"moodle_id": participant, "moodle_name": name}, timed=False,
                where=f"{root.name}/{name}_{participant}"))
            source.files.append(path)
            source.own[path] = "/".join(rel.parts[1:]) if len(rel.parts) > 1 else m["file"] or path.name
            continue
        m = (CANVAS_ANONYMOUS.match(top) or CANVAS_NAME.match(top)) if len(rel.parts) == 1 else None
        if m:
            anonymous = m.groupdict().get("anonymous")
            if anonymous:
                label, lms = f"anonymous {anonymous}", {"anonymous_id": anonymous}
            else:
                label, lms = _shown(m["slug"]), {"canvas_id": m["user"], "canvas_name": _shown(m["slug"])}
            key = ("anonymous", anonymous) if anonymous else ("canvas", m["user"])
            folder = f"anon_{anonymous}" if anonymous else f"{label}_{m['user']}"
            source = sources.setdefault(key, Source(label, lms={**lms, "canvas_attachment": m["attachment"]},
                                                    timed=False, where=f"{root.name}/{folder}"))
            source.files.append(path)
            source.own[path] = _shown(m["file"])
            source.marked_late |= bool(m["late"])
            continue
        loose.append(path)
    matched = sum(len(x.files) for x in sources.values())
    if not matched or len(loose) > matched:  # a few names that look like an LMS's do not make a download
        return None
    return list(sources.values()), _stray(loose, root)


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


def _tidy(source: Source, dest: Path) -> None:
    """Move the files of one LMS submission that we unpacked into a folder of its own, under the names the student
    gave them (`dest/lovelaceada_50/03_softmax.ipynb`); a name taken twice gets " (2)", " (3)", ..."""
    folder = dest / source.where.split("/", 1)[1]
    moved = []
    for path in source.files:
        target = folder / source.own.get(path, path.name)
        n = 1
        while target.exists() and target != path:
            n += 1
            target = target.with_name(f"{Path(source.own[path]).stem} ({n}){Path(source.own[path]).suffix}")
        try:
            if target != path:
                target.parent.mkdir(parents=True, exist_ok=True)
                path.rename(target)
        except OSError:  # a file where the folder should be: the download's own name stays
            target = path
        moved.append(target)
    source.files, source.where = moved, f"{dest.name}/{folder.name}"


def _unpacked_by_us(folder: Path) -> bool:
    """Whether `folder` is in (or is) a folder the grader unpacked a zip into (`UNPACKED_MARK`)."""
    return any((f / UNPACKED_MARK).exists() for f in (folder, *folder.parents))


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
            if not files:
                notes.append(f"{path.name} holds no files")
                continue
            lms = _lms_sources(sorted(files), dest)
            found, stray = lms or _folder_sources(_single_folder(dest))
            for source in found:
                source.timed = False  # unpacked files carry the time of unpacking, not of submission
                if lms is not None:
                    _tidy(source, dest)
            sources += found
            notes += stray
        elif path.is_file():
            sources.append(Source(path.stem, [path], where=str(path), is_folder=False))
        elif path.is_dir():
            found, stray = _folder_sources(path)
            if _unpacked_by_us(path):  # the grader's own copy: its files carry the time they were unpacked
                for source in found:
                    source.timed = False
            sources += found
            notes += stray
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return sources, notes


# ---------------------------------------------------------------------------------------------- matching


def _submission(label: str, group: list[Source], student: dict[str, str], order: int,
                worksheet: tuple[Mapping[str, dt.datetime | None], list[str]] | None = None) -> Submission:
    """A student's (or an unmatched source's) submission from its sources; `worksheet`: (the times Moodle's
    worksheet gives, by student id: `ClassRecords.worksheet_times`; the notes naming a time written in no known
    form, which is not used)."""
    notebooks = sorted({p for s in group for p in s.files if p.suffix == ".ipynb"}, key=str)
    issues = [Incident(n) for s in group for n in s.notes]  # remarks: a zip they handed in, unpacked
    if len(group) > 1:
        issues.append(Incident(f"{DUPLICATE_SUBMISSIONS}: " + " and ".join(s.where for s in group)
                               + "; all were graded, the best notebook for each exercise counts", Status.DUPLICATES))
    ignored = [p.name for s in group for p in s.files if p.suffix != ".ipynb"]
    issues += [Incident(f"ignored {name}: not a notebook", Status.IGNORED_FILES) for name in ignored]
    times = [p.stat().st_mtime for p in notebooks]
    submitted = (dt.datetime.fromtimestamp(max(times), dt.timezone.utc).isoformat(timespec="seconds")
                 if times and all(s.timed for s in group) else None)
    lms = {k: v for s in reversed(group) for k, v in s.lms.items()}  # the first source's, where several say
    timing = (Timing.FILES if submitted else Timing.LMS_MARK
              if any(s.lms.get("canvas_id") or s.lms.get("anonymous_id") for s in group) else Timing.NONE)
    times, notes = worksheet or ({}, [])
    text = student.get("moodle_submitted", "")
    if text and group and times:
        moment = times.get(student.get("student_id", ""))
        if moment is None:
            notes.append(f"{label}: the worksheet's {MOODLE_SUBMITTED} {text!r} is not a time Moodle "
                         "writes; that submission's lateness was not judged from it")
        else:
            submitted, timing = moment.astimezone(dt.timezone.utc).isoformat(timespec="seconds"), Timing.WORKSHEET
    return Submission(label, "; ".join(s.where for s in group), notebooks,
                      is_folder=any(s.is_folder for s in group) or len(notebooks) > 1, student=student,
                      submitted=submitted, marked_late=any(s.marked_late for s in group), issues=issues, order=order,
                      ignored=ignored, lms=lms, timing=timing, label="; ".join(s.label for s in group))


def roster_matcher(roster: list[dict[str, str]]) -> Matcher:
    """The roster's students, to be found by any of their keys (`people`)."""
    return Matcher(Person.of(r["student_id"], r["name"], r) for r in roster)


def match(sources: list[Source], roster: list[dict[str, str]] | None,
          worksheet: tuple[Mapping[str, dt.datetime | None], list[str]] | None = None) -> list[Submission]:
    """One submission per student (see the module docstring); without a roster, one per name; each timed by
    Moodle's worksheet where `worksheet` gives its times (see `_submission`).

    A source is matched by the LMS ids its download gave, then by its name with `people.Matcher` (any key of the
    roster: an id, an e-mail, a name, a folder the grader wrote); a name that fits several students is refused and
    they are named."""
    if roster is None or any(s.lms.get("anonymous_id") for s in sources):
        groups: dict[str, list[Source]] = {}
        for s in sources:
            groups.setdefault(s.lms.get("anonymous_id") or plain(s.label) or s.label, []).append(s)
        return [_submission(g[0].label, g, {}, i) for i, g in enumerate(groups.values())]
    by_key = {r["student_id"]: r for r in roster}
    by_canvas = {r["canvas_id"]: r for r in roster if r["canvas_id"]}
    by_moodle = {r["moodle_id"]: r for r in roster if r["moodle_id"]}
    matcher = roster_matcher(roster)
    matched: dict[str, list[Source]] = {}
    unmatched: list[tuple[Source, Found]] = []
    for s in sources:
        student = by_canvas.get(s.lms.get("canvas_id", "")) or by_moodle.get(s.lms.get("moodle_id", ""))
        found = None
        if student is None:
            found = matcher.find(s.label)
            student = by_key[found.person.key] if found.outcome == Outcome.FOUND else None
        if student is None:
            unmatched.append((s, found))
        else:
            matched.setdefault(student["student_id"], []).append(s)
    out = []
    for i, r in enumerate(roster):
        group = matched.get(r["student_id"], [])
        sub = _submission(r["name"], group, r, i, worksheet)
        if not group:
            sub.path = ""
        out.append(sub)
    for j, (s, found) in enumerate(unmatched):
        sub = _submission(s.label, [s], {}, len(roster) + j)
        why = (found.why if found is not None and found.outcome == Outcome.SEVERAL
               else "no student matches it (by LMS id, student id, e-mail, folder or name)")
        sub.issues.insert(0, Incident(f"{Status.NOT_ON_ROSTER}: {s.where!r}: {why}", Status.NOT_ON_ROSTER))
        out.append(sub)
    return out


def intake(paths: list[Path | str], workdir: Path, records: ClassRecords = ClassRecords(),
           limits: ZipLimits = ZipLimits(), others: tuple[Person, ...] = ()) -> Intake:
    """The submissions to grade from command-line paths, under what the class's own files say (`roster.read_class`:
    the roster, the submission times, the worksheet's times), read before; `others`: people the times file may name
    who are not here (the rows of a gradebook being regraded)."""
    workdir = Path(workdir).resolve()  # every path below is absolute, whatever the caller's working folder
    class_list, stamps = records.roster, records.stamps
    sources, notes = sources_from([Path(p).resolve() for p in paths], workdir, limits)
    sources, left_out = _without_test_students(sources, class_list.left_out if class_list else [])
    for i, source in enumerate(sources):
        notes += _unpack_handed_in_zips(source, workdir / "handed-in-zips" / f"{i}-{plain(source.label) or 'x'}", limits)
    anonymous = any(s.lms.get("anonymous_id") for s in sources)
    if anonymous and class_list is not None:
        notes.append("an anonymous download (Canvas's anonymous grading): its submissions are graded under their "
                     "anonymous ids, one row each; the roster cannot name them and was not used")
    lateness = _lateness(sources, bool(stamps))
    submissions = match(sources, class_list.students if class_list else None,
                        (records.worksheet_times if not stamps else {}, notes))
    notes += _apply_times(submissions, stamps, records.times_name, others)
    if any(s.timing == Timing.WORKSHEET for s in submissions):
        lateness = (f"from Moodle's grading worksheet ({MOODLE_SUBMITTED}), read in the deadline's time "
                    f"zone ({records.zone})")
    return Intake(submissions, notes, lateness, class_list.form if class_list else "", left_out)


def _without_test_students(sources: list[Source], left_out: list[dict[str, str]]) -> tuple[list[Source], list[str]]:
    """The sources without Canvas's Test Student's (by the roster's entry for it, or by its name), and the sentence
    naming it once."""
    ids = {e["canvas_id"] for e in left_out if e["canvas_id"]}
    kept, dropped = [], []
    for s in sources:
        test = s.lms.get("canvas_id") in ids or (not s.lms.get("anonymous_id") and is_test_student(s.label))
        (dropped if test else kept).append(s)
    said = []
    if left_out or dropped:
        where = ([f"the roster's {e['name']!r}" + (f" (ID {e['canvas_id']})" if e["canvas_id"] else "") for e in left_out]
                 + [f"the download's {s.where}" for s in dropped])
        said.append("Canvas's Test Student (its student view) is no student of the class: left out of every file "
                    "and the summary: " + "; ".join(where))
    return kept, said


def _apply_times(submissions: list[Submission], stamps, name: str, others: tuple[Person, ...] = ()) -> list[str]:
    """Set each submission's time from the submission-times file, each line's student found by `people.Matcher` as
    every other name is (its column's value, whatever key it is); IntakeError listing every line that names no one,
    or several, before anything is graded. A line naming one of `others` (the rows of a gradebook being regraded)
    is theirs: not used here, not refused."""
    rows = Matcher(others)
    regraded = {}  # a submission no roster names, by the gradebook row it will replace (as `cli` finds it)
    for s in submissions:
        found = rows.find(s.label or s.name) if not s.student and others else None
        if found is not None and found.outcome == Outcome.FOUND:
            regraded[id(s)] = found.person.key
    matcher = Matcher([*(Person.of(s.key, s.name, s.student, s.lms) for s in submissions if id(s) not in regraded),
                       *others])
    by_key: dict[str, list[Submission]] = {}
    for s in submissions:
        by_key.setdefault(regraded.get(id(s), s.key), []).append(s)
    refused = []
    for column, value, moment in stamps:
        found = matcher.find(value)
        if found.outcome != Outcome.FOUND:
            refused.append(f"{column} {found.why}")
            continue
        for s in by_key.get(found.person.key, []):
            s.submitted = moment.astimezone(dt.timezone.utc).isoformat(timespec="seconds")
            s.timing = Timing.TIMES_FILE
    if refused:
        raise IntakeError(f"the submission times {name}: {len(refused)} line(s) name no one in the class, or several:"
                          "\n  " + "\n  ".join(refused))
    return []


def _lateness(sources: list[Source], timed: bool) -> str:
    """Where lateness comes from, said for the summary."""
    if timed:
        return "from the submission-times file"
    if any(s.lms.get("canvas_id") or s.lms.get("anonymous_id") for s in sources):
        return ("late or not, as Canvas marked each submission: its download carries no times, so a late submission "
                "counts as 1 day late (give --submission-times for the late rule per day)")
    if any(s.lms.get("moodle_id") for s in sources):
        return "none: Moodle's download carries no times (give --submission-times for the late rule)"
    if sources and all(s.timed for s in sources):
        return "from the notebooks' modification times"
    return "none: nothing in the download says when it was submitted (give --submission-times for the late rule)"


def _unpack_handed_in_zips(source: Source, dest: Path, limits: ZipLimits) -> list[str]:
    """A zip a student handed in (their notebooks zipped): unpacked, one level, safely, its files added to theirs."""
    notes = []
    for archive in [p for p in source.files if p.suffix.lower() == ".zip"]:
        target = (dest / archive.stem).resolve()
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
