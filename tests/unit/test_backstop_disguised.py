"""The backstop reads what a person reads (CONTRACT 11): invisible characters, case, accents,
full-width and styled forms, and letters of other scripts that look Latin hide no promise."""
import pytest

from commands.invisible import INVISIBLE_RANGES
from ledger.core.promises import fold, normalise, promised_follow_up, readings

DISGUISED_PROMISES = [
    # invisible format characters (Unicode category Cf)
    "I will c\u200ball you back",                      # zero-width space
    "I will ca\u00adll you back",                      # soft hyphen
    "I will cal\u200cl you back",                      # zero-width non-joiner
    "I will call\u200d you back",                      # zero-width joiner
    "I wi\u2060ll call you ba\u2060ck",                # word joiner
    "\ufeffI will call you back",                      # byte order mark
    "I will g\u200be\u200bt b\u200ba\u200bc\u200bk to you",
    "I\u2062 go\u2063 call\u2064 you back",            # invisible times, separator, plus
    "I go call you \u202eback\u202c",                  # right-to-left override and pop
    "We\u180e'll get back to you",                     # Mongolian vowel separator
    # letters of other scripts that look Latin (TR39 confusables)
    "I go c\u0430ll you back",                         # Cyrillic а
    "I will \u0441all you back",                       # Cyrillic с
    "I w\u0456ll call y\u043eu back",                  # Cyrillic і, о
    "\u0406'll get b\u0430\u0441k to \u0443\u043eu",   # Cyrillic І, а, с, у, о
    "I will call you ba\u0441\u043a",                  # Cyrillic к (a small capital look-alike)
    "I will call you b\u03b1ck",                       # Greek alpha
    "I will call y\u03bfu back",                       # Greek omicron
    "\u0399'LL CALL Y\u039fU \u0392\u0391CK",          # Greek capitals Ι, Ο, Β, Α
    "\u0421\u0410LL Y\u041eU \u0412\u0410\u0421\u041a",  # Cyrillic capitals
    "Our te\u0430m will re\u0430\u0441h out to you",
    "M\u0430ke I \u0441onfirm \u0430m",
    # full-width and styled forms (NFKC)
    "\uff29 \uff57\uff49\uff4c\uff4c \uff43\uff41\uff4c\uff4c \uff59\uff4f\uff55 \uff42\uff41\uff43\uff4b",
    "I will \U0001d41c\U0001d41a\U0001d425\U0001d425 you back",  # mathematical bold
    "I will \u24d2all you back",                      # circled c
    # accents, precomposed and combining
    "\u00cd w\u00edll c\u00e0ll y\u00f6u b\u00e2ck",
    "I will c\u0301a\u0300ll you back",
    "I will g\u00ebt b\u00e4ck t\u00f6 y\u00f6u",
    # case and mixtures
    "i WiLl CaLl YoU bAcK",
    "I w\u200bi\u0301ll \uff43\u0430\u00adll you b\u03b1ck",
    "FOL\u00adLOW-\u200bUP c\u043eming from the manager",
    "I go c\u00e0ll y\u043eu b\u0430ck, abeg",
    "Somebody go c\u0430ll you soon",
    # invisible outside category Cf (default-ignorables, variation selectors), blanks, marks
    "I will c\u034fall you back",                      # combining grapheme joiner
    "I will c\ufe0fall you back",                      # variation selector 16
    "I will c\ufe00a\ufe0el\ufe01l you back",          # variation selectors 1, 15, 2
    "I will c\U000e0100all you back",                  # variation selector 17 (supplement)
    "I will c\u17b4a\u17b5ll you back",                # Khmer inherent vowels
    "I will c\u180ba\u180cl\u180dl you back",          # Mongolian free variation selectors
    "I will c\u3164all you back",                      # Hangul filler
    "I will c\u115fall you back",                      # Hangul choseong filler
    "I will c\uffa0all you back",                      # half-width Hangul filler
    "I will c\u2800all you back",                      # braille blank, read as nothing
    "I will call\u2800you back",                       # braille blank, read as a space
    "I will c\u20dda\u20ddl\u20ddl\u20dd you back",     # combining enclosing circle
    "I will ca\U000e0041ll you back",                  # tag letter
    # small capitals, other letterlike forms
    "I will \u1d04\u1d00\u029f\u029f you back",          # ᴄᴀʟʟ
    "\u026a \u1d21\u026a\u029f\u029f \u1d04\u1d00\u029f\u029f \u028f\u1d0f\u1d1c \u0299\u1d00\u1d04\u1d0b",  # all small capitals
    "I will \u249e\u249c\u24a7\u24a7 you back",          # parenthesized letters
    "I will \U0001f172\U0001f170\U0001f17b\U0001f17b you back",  # negative squared letters
    "I will \U0001f1e8\U0001f1e6\U0001f1f1\U0001f1f1 you back",  # regional indicators
    "I will call you back, b\u212e sure",           # estimated symbol as e: the promise is before it
    "I will g\u212et back to you",                     # estimated symbol as e
]

DISGUISED_HARMLESS = [
    "Your order is c\u200bonfirmed. Total: \u20a690,000.",
    "W\u0435 h\u0430ve 10 b\u0430gs in stock.",
    "\uff34\uff48\uff41\uff4e\uff4b \uff59\uff4f\uff55 for your payment!",
    "H\u00e9re is your payment link: https://pay.sandbox.invalid/l/lnk-1",
    "Rice 50kg is \u20a645,000 per bag.\u200d",
    "Ca\u00adll center hours: 9 to 5.",          # "call", but no promise
    "\u0421\u043f\u0430\u0441\u0438\u0431\u043e \u0437\u0430 \u0437\u0430\u043a\u0430\u0437",  # Russian: thanks for the order
    "\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1",                      # Greek: good morning
    "Delivery takes 2 days \u202ewithin Lagos\u202c.",
    "\u00bfCu\u00e1ntos sacos quieres?",
    "Feel free to re\u0430ch out to us anytime.",
    "Your order is c\u034fonfirmed\ufe0f \u2705",
    "C\u2800all center hours: 9 to 5.",
]


@pytest.mark.parametrize("reply", DISGUISED_PROMISES)
def test_a_disguised_promise_is_caught(reply):
    assert promised_follow_up(reply) is not None


@pytest.mark.parametrize("reply", DISGUISED_HARMLESS)
def test_a_disguised_ordinary_reply_is_not_a_promise(reply):
    assert promised_follow_up(reply) is None


def test_there_are_at_least_fifty_disguises():
    assert len(DISGUISED_PROMISES) >= 50


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066",
                                  "\u034f", "\ufe0f", "\U000e01ef", "\u17b4", "\u180d", "\u20dd", "\U000e007f"])
def test_invisible_characters_and_marks_are_dropped(char):
    assert normalise(f"ca{char}ll") == "call"


@pytest.mark.parametrize("char", ["\u2800", "\u3164", "\u115f", "\u1160", "\uffa0"])
def test_a_blank_reads_as_a_space_and_as_nothing(char):
    assert readings(f"ca{char}ll") == ["ca ll", "call"]


def test_every_default_ignorable_and_format_character_is_dropped():
    # given every code point commands/invisible.py names (Cf and Default_Ignorable_Code_Point)
    blanks = {0x115F, 0x1160, 0x3164, 0xFFA0}
    codes = [c for a, b in INVISIBLE_RANGES for c in range(a, b + 1) if c not in blanks]
    # when each sits inside a word / then the word reads whole
    assert [chr(c) for c in codes if normalise(f"ca{chr(c)}ll") != "call"] == []


def test_small_capitals_and_letterlike_forms_fold_to_their_letter():
    assert fold("\u1d00\u0299\u1d04\u1d05\u1d07\ua730\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d\u0274\u1d0f"
                "\u1d18\ua7af\u0280\ua731\u1d1b\u1d1c\u1d20\u1d21\u028f\u1d22") == "abcdefghijklmnopqrstuvwyz"


def test_look_alike_letters_fold_to_their_latin_skeleton():
    assert fold("\u0430\u0441\u0435\u043e\u0440\u0445\u0443 \u03b1\u03bf\u03bd\u03b9") == "aceopxy aovi"


def test_plain_text_other_than_latin_look_alikes_is_kept():
    assert normalise("\u4f60\u597d \u0645\u0631\u062d\u0628\u0627") == "\u4f60\u597d \u0645\u0631\u062d\u0628\u0627"
