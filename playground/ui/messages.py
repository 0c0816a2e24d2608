"""Messages on the page: text a user supplied shown as typed (`inert`), and a page or a part of it whose failure is
one error line (`guarded`)."""

from __future__ import annotations

import re

import streamlit as st

from ..base.errors import PlaygroundError

# What markdown, HTML or Streamlit would act on in a message: code, emphasis, links and images, HTML,
# math, headings and tables always; underscores that could open or close emphasis (not inside a name like
# dilation_nd); a colon that could open a directive (:red[…], :material/…:) or a URL scheme (http:); the
# dot of a www. autolink. Ordinary prose keeps its characters, so messages stay readable as stored.
_ACTIVE = re.compile(r"[\\`*~|$<>\[\]#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=[A-Za-z/])|(?<=www)\.")


# Streamlit's markdown turns bare URLs, www. names and e-mail addresses into links after escapes are
# resolved, so those are broken with an invisible word joiner instead.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\\\.)|(?<=@)")


def inert(text) -> str:
    """Text for Streamlit's markdown that shows as typed: for anything a user supplied (a value quoted in an
    error, a link's text) and for messages that may quote one."""
    escaped = _ACTIVE.sub(lambda m: "\\" + m.group(0), str(text))
    return _AUTOLINK.sub("\u2060", escaped).replace("\n", "  \n")


def guarded(draw) -> None:
    """Run a page or a part of it; a bug shows as one error line, never as a traceback in front of a room."""
    try:
        draw()
    except PlaygroundError as exc:  # a setting or input whose message names the rule
        st.error(inert(exc), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - Streamlit's rerun/stop signals are BaseExceptions and pass through
        st.error(inert(f"Unexpected error ({type(exc).__name__}): {exc}"), icon=":material/error:")
