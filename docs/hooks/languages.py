"""MkDocs hook: every course page links to the same page in the other language, under its title."""
import re

OTHER = {"en": ("es", "Esta página en español"), "es": ("en", "This page in English")}


def on_page_markdown(markdown, page, config, files):
    lang, _, name = page.file.src_uri.partition("/")
    if lang not in OTHER:
        return markdown
    other, label = OTHER[lang]
    link = f'<span class="other-language">[{label}](../{other}/{name})</span>'
    title = re.match(r"^# .*\n", markdown)
    if title is None:
        return link + "\n\n" + markdown
    return markdown[:title.end()] + "\n" + link + "\n" + markdown[title.end():]
