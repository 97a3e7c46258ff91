"""The backstop reads what a person reads (CONTRACT 11): invisible characters, case, accents,
full-width and styled forms, and letters of other scripts that look Latin hide no promise."""
import pytest

from ledger.promises import fold, normalise, promised_follow_up

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
]


@pytest.mark.parametrize("reply", DISGUISED_PROMISES)
def test_a_disguised_promise_is_caught(reply):
    assert promised_follow_up(reply) is not None


@pytest.mark.parametrize("reply", DISGUISED_HARMLESS)
def test_a_disguised_ordinary_reply_is_not_a_promise(reply):
    assert promised_follow_up(reply) is None


def test_there_are_at_least_thirty_disguises():
    assert len(DISGUISED_PROMISES) >= 30


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066"])
def test_format_characters_are_dropped(char):
    assert normalise(f"ca{char}ll") == "call"


def test_look_alike_letters_fold_to_their_latin_skeleton():
    assert fold("\u0430\u0441\u0435\u043e\u0440\u0445\u0443 \u03b1\u03bf\u03bd\u03b9") == "aceopxy aovi"


def test_plain_text_other_than_latin_look_alikes_is_kept():
    assert normalise("\u4f60\u597d \u0645\u0631\u062d\u0628\u0627") == "\u4f60\u597d \u0645\u0631\u062d\u0628\u0627"
