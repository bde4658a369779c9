"""The rubric every reader applies, a person reading the sheets or a served judge: written once here,
shown in docs/audit.md (a test keeps the two the same) and given to the judge word for word."""

RUBRIC = """\
Read each question alone first and write down every real-world entity you believe satisfies it, from
your own knowledge ("unsure" is an answer). Only then look at the stored answer (and, if you want, the
construction path and the evidence) and mark:

- right: yes if the stored answer is correct in the real world, the facts it rests on included.
- only: yes if you believe no other real-world entity satisfies the question; if you named others
  in the first step that truly fit, no.
- rating: good (one clear real-world answer, reads as a person would write it), ok (readable and
  probably unique, but awkward or borderline), bad (several real answers, a wrong or stale fact,
  nonsense, the wrong type, or unreadable).
- other_answers: the other real-world answers you found, separated by ";".
- note: one line for every bad: which other answers, which fact is wrong, what reads badly.
"""

RATINGS = {"good": "good", "g": "good", "ok": "ok", "o": "ok", "bad": "bad", "b": "bad"}
"""What a sheet may write in the rating column (any case) -> the stored rating."""
YES = {"yes", "y", "true", "1", "x"}
NO = {"no", "n", "false", "0"}
UNSAID = {"", "-", "unsure", "?", "n/a", "na"}


def rating(value: object) -> str:
    """The stored rating a sheet's cell gives; ValueError naming the scale otherwise."""
    text = str(value if value is not None else "").strip().lower()
    if text not in RATINGS:
        raise ValueError(f"rating {value!r} is not on the scale good / ok / bad (G / OK / B)")
    return RATINGS[text]


def yes_no(value: object, column: str) -> bool | None:
    """True, False, or None where the reader left it blank or unsure; ValueError otherwise."""
    if isinstance(value, bool):
        return value
    text = str(value if value is not None else "").strip().lower()
    if text in YES:
        return True
    if text in NO:
        return False
    if text in UNSAID:
        return None
    raise ValueError(f"{column} {value!r} is not yes / no (or blank when unsure)")


def answer_list(value: object) -> list[str]:
    """A cell of answers separated by ";" (or a JSON list) as a list, blanks and "unsure" left out."""
    parts = value if isinstance(value, list) else str(value if value is not None else "").split(";")
    return [str(part).strip() for part in parts if str(part).strip().lower() not in UNSAID]
