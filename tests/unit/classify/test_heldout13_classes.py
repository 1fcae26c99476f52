"""Classes held-out part 13 showed (classifier 1.13.0): an English reply that drifts into Chinese mid-line or glues a
Han word into its prose, and a reply that is nothing but one digit repeated.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify.drift import language_drift, opens_in_english, threshold
from eval.classify.salad import doubled_clitics
from eval.classify.salad import thresholds as salad_thresholds
from tests.unit.classify.helpers import labels, message

DRIFT = (
    "Here are some of the rivers that shaped the history of China, listed from north to south:\n\n"
    "- **Yellow River** (5,464 km): 被称为中华文明的摇篮，流经九个省份。\n"
    "- **Huai River** (1,000 km): 是中国南北方的传统分界线之一。\n"
    "- **Yangtze River** (6,300 km): 亚洲最长的河流，也是世界第三长河。\n"
)
GLUED = "The test is still flaky and the retry loop真 hides it, so we should fix the timeout first."


def test_english_reply_drifting_into_chinese_is_degenerate():
    assert threshold() == 0.0  # calibrated: none of the 32,946 dev fields and catalog pieces has one
    assert language_drift(DRIFT) == 3
    assert "degenerate_repetition" in labels(message(DRIFT), "auto")


def test_han_word_glued_into_english_prose_is_degenerate():
    assert language_drift(GLUED) == 1
    assert "degenerate_repetition" in labels(message(GLUED), "auto")
    reasoning = message("The fix is ready.", reasoning=GLUED)  # reasoning models mix languages while healthy
    assert "degenerate_repetition" not in labels(reasoning, "auto")


def test_chinese_named_in_english_prose_stays_clean():
    for text in (
        "In Mandarin, good morning is 早上好 (zǎo shàng hǎo), and good night is 晚安.",
        'The error message "文件不存在" means that the file does not exist on the server.',
        "Set the locale to Chinese (简体中文) and restart the app.\n- Simplified: 简体中文\n- Traditional: 繁體中文",
        "The word for water is 水; the radical 氵 on the left of 河 and 海 comes from it.",
        "Here is the file list:\n\n```\n说明.txt\nREADME.md\n```\n\nand the test prints `测试通过` when it passes.",
        "See https://example.com/文档/安装 for the installation guide of the project and its plugins.",
    ):
        assert language_drift(text) == 0, text
        assert "degenerate_repetition" not in labels(message(text), "auto"), text


def test_chinese_prose_with_latin_names_is_not_read():
    for text in (
        "用pip安装依赖，然后运行pytest测试。如果失败，请检查Python版本是否为3.11。",
        "这个函数返回一个list，每个元素是dict。The keys are the names of the columns.\n其中key是列名。",
        "## 安装\n\n首先 install the package, 然后配置 config.yaml 文件里的 database 部分。",
    ):
        assert not opens_in_english(text[: text.index(next(c for c in text if "\u4e00" <= c <= "\u9fff"))]), text
        assert language_drift(text) == 0, text


def test_labels_and_license_text_do_not_open_a_field_in_english():
    header = "Project-Id-Version: Demo 1.0\nContent-Type: text/plain; charset=UTF-8\nLanguage: zh_CN\n"
    assert (
        language_drift(header + "打开文件失败：权限不足，请检查您的设置\nDemo 服务：无法连接到服务器，请稍后再试\n")
        == 0
    )


def test_a_conversation_in_chinese_or_asking_for_it_is_not_read():
    for prompt in ("请用中文回答", "Translate the release notes, please.", "Explain this Chinese proverb."):
        asked = message(DRIFT, messages=[{"role": "user", "content": prompt}])
        assert "degenerate_repetition" not in labels(asked, "auto"), prompt
    plain = message(DRIFT, messages=[{"role": "user", "content": "List some rivers of China."}])
    assert "degenerate_repetition" in labels(plain, "auto")


# --- a reply that is one digit repeated --------------------------------------------------------------------------


def test_a_reply_of_nothing_but_one_digit_is_degenerate():
    for text, finish in (("0" * 30, "length"), ("0" * 25, None), (" " + "7" * 40 + "\n", None), ("0" * 5000, "length")):
        assert "degenerate_repetition" in labels(message(text, finish=finish), "auto"), text[:20]


def test_digits_in_data_and_short_numbers_stay_clean():
    for text in (
        "0" * 12,  # shorter than the fields the short-loop rule reads
        # "The balance is " + "0" * 80 was here: classifier 1.14.0 flags a run of one digit that ends a reply
        # (eval/classify/digitrun.py, test_recall_classes_114.py); a long number inside a sentence stays clean.
        "The balance is " + "0" * 80 + " cents, the account was never funded.",
        "x = [0] * 8\n" + "0" * 70,
        "0000000000 0000000000 0000000000",  # groups: data, not one run
        "1" * 19 + "2",
        "mask = 0b" + "1" * 64,
    ):
        assert "degenerate_repetition" not in labels(message(text), "auto"), text[:30]


# --- a clitic written twice -------------------------------------------------------------------------------------


def test_a_clitic_written_twice_is_a_stutter():
    assert salad_thresholds()["doubled_clitics"] == 0.0  # calibrated: no clean field has one
    for text in (
        "We should check the options first. Let's's look at each of them and decide which one is false.",
        "I don't't think the cache is the problem here, so the next step is to read the scheduler logs.",
        "Now we\u2019re\u2019re ready to write the final answer, after checking the last two options again.",
    ):
        assert doubled_clitics(text) == 1, text
        assert "degenerate_repetition" in labels(message(text), "auto"), text
        assert "degenerate_repetition" in labels(message("Answer: B", reasoning=text), "auto"), text


def test_apostrophes_of_other_languages_and_code_stay_clean():
    for text in (
        "L'homme est arrivé aujourd'hui, et l'ami de l'école l'a vu dans l'après-midi.",
        "Nell'anno dell'unità, quell'uomo all'alba.",
        "It's James's book, and it's rock'n'roll at five o'clock; y'all'd like it.",
        "Use `fmt = '%s's'` in the template, then `x = 's's'` in the test.",
        "The pattern 's 's repeats, as in it's 's.",
    ):
        assert doubled_clitics(text) == 0, text
