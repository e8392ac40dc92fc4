#!/usr/bin/env python3
"""Drives the `baton serve` playground in headless Chromium through Selenium: API key, model name,
a streamed chat answer with its TTFT and tok/s, an inline error, and a streamed completion.

Usage: playground_browser_test.py BATON_BINARY MODEL.gguf SCREENSHOT.png
SCREENSHOT.png gets the chat at 1280x800 (the picture in docs/images/playground.png); beside it go
playground-completion.png and playground-narrow.png (a phone-sized window). Exits 77 (skip) when
selenium, chromium, chromedriver or the model is missing.
"""
import os
import re
import shutil
import sys

from serve_process import check, start_server, stop_server

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("skip: the selenium package is not installed (scripts/python-test-env.sh installs it)")
    sys.exit(77)

API_KEY = "playground-key"
MODEL_NAME = "kjv-demo"
WAIT_SECONDS = 60

# Records each distinct text of the newest assistant message as the page changes it, and whether
# the request was still in flight then, so streaming is seen however fast the model is.
RECORD_STREAM_JS = """
window.streamStates = [];
const messages = document.getElementById("messages");
new MutationObserver(() => {
  const content = messages.querySelector(".msg.assistant:last-child .content");
  if (!content || !content.textContent) return;
  const states = window.streamStates;
  if (states.length && states[states.length - 1].text === content.textContent) return;
  states.push({text: content.textContent, busy: document.body.dataset.busy === "true"});
}).observe(messages, {childList: true, subtree: true, characterData: true});
"""


def find_browser():
    """Debian's chromium and its driver, or exit 77 naming what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", driver))
               if path is None]
    if missing:
        print("skip: %s not installed (apt-get install chromium chromium-driver; "
              "scripts/setup.sh installs them)" % " and ".join(missing))
        sys.exit(77)
    return chromium, driver


def open_browser(chromium, driver_path):
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # Root in a container: no sandbox, no GPU, and /dev/shm is often too small.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,800", "--hide-scrollbars"):
        options.add_argument(flag)
    # The driver is given, so Selenium must not look for one on the network.
    os.environ["SE_OFFLINE"] = "true"
    browser = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    set_viewport(browser, 1280, 800)
    return browser


def set_viewport(browser, width, height):
    """Makes the page's viewport, and so the screenshots, exactly width x height."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def text(browser, element_id):
    return browser.find_element(By.ID, element_id).text


def wait_for(browser, condition, what):
    return WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05).until(
        lambda b: condition(b), message="timed out waiting for " + what)


def set_field(browser, element_id, value):
    field = browser.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(value)


def send(browser, prompt):
    set_field(browser, "prompt", prompt)
    browser.find_element(By.ID, "send").click()


def wait_until_idle(browser):
    wait_for(browser, lambda b: b.execute_script("return document.body.dataset.busy") == "false",
             "the answer to finish")


def check_stats(browser):
    ttft, tps = text(browser, "ttft"), text(browser, "tps")
    check(re.fullmatch(r"\d+", ttft), "TTFT is not a number of ms: %r" % ttft)
    check(re.fullmatch(r"\d+\.\d", tps) and float(tps) > 0, "tok/s is not a rate: %r" % tps)
    tokens = int(text(browser, "tokens"))
    check(tokens > 1, "token count: %d" % tokens)


def unlock_with_api_key(browser):
    # Without the key the model list is refused, and the page says so.
    wait_for(browser, lambda b: not b.find_element(By.ID, "error").get_attribute("hidden"),
             "the 401 from /v1/models to show")
    check("401" in text(browser, "error"), "error: %r" % text(browser, "error"))
    set_field(browser, "api-key", API_KEY)
    browser.find_element(By.ID, "temperature").click()  # leaving the field sends its change event
    wait_for(browser, lambda b: text(b, "model") == MODEL_NAME, "the model name in the header")
    check(browser.find_element(By.ID, "error").get_attribute("hidden"), "the 401 stays shown")


def chat(browser):
    # Short enough that the second turn, which carries the first, fits the model's 256 tokens.
    set_field(browser, "max-tokens", "80")
    set_field(browser, "seed", "7")
    browser.execute_script(RECORD_STREAM_JS)
    # The demo model writes a whole answer in a fraction of a second, which the browser may read in
    # one piece; a slow link (about 1 s for the answer) makes the page's growing text observable
    # on every machine.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 0, "downloadThroughput": 16000, "uploadThroughput": -1})
    send(browser, "Tell me a story about a dog.")
    wait_until_idle(browser)
    states = browser.execute_script("return window.streamStates")
    answer = browser.find_element(By.CSS_SELECTOR, "#messages .msg.assistant .content").text
    check(answer.strip(), "the chat answer is empty")
    streaming = [s["text"] for s in states if s["busy"]]
    check(len(streaming) >= 3,
          "the answer did not grow while streaming: %d states before it finished" % len(streaming))
    for shorter, longer in zip(streaming, streaming[1:]):
        check(longer.startswith(shorter), "the streamed text was rewritten: %r" % states)
    print("playground: the chat answer streamed in %d visible steps" % len(streaming))
    check_stats(browser)
    check(re.search(r"TTFT \d+ ms", browser.find_element(
        By.CSS_SELECTOR, "#messages .msg.assistant .stats").text), "the answer's own stats")

    # Stop ends the answer where it is and keeps it in the conversation.
    browser.execute_script("window.streamStates = []")
    send(browser, "And then?")
    wait_for(browser, lambda b: b.execute_script("return window.streamStates.length") > 0,
             "the second answer to start")
    browser.find_element(By.ID, "stop").click()
    wait_until_idle(browser)
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    answers = browser.find_elements(By.CSS_SELECTOR, "#messages .msg.assistant")
    check(len(answers) == 2, "the conversation has %d answers" % len(answers))
    check(answers[1].find_element(By.CSS_SELECTOR, ".note").text == "stopped", "no stop note")
    check(answers[1].find_element(By.CSS_SELECTOR, ".content").text.strip(), "empty when stopped")
    check(not text(browser, "error"), "error after Stop: %r" % text(browser, "error"))


def inline_error(browser):
    set_field(browser, "max-tokens", "100000")
    send(browser, "Once upon a time")
    wait_until_idle(browser)
    error = text(browser, "error")
    check("400" in error and "max_tokens" in error, "the error body is not shown: %r" % error)
    set_field(browser, "max-tokens", "60")


def completion(browser):
    browser.find_element(By.ID, "mode-completion").click()
    check(browser.find_element(By.ID, "output").is_displayed(), "the output is hidden")
    check(not browser.find_element(By.ID, "messages").is_displayed(), "the chat is still shown")
    inline_error(browser)
    send(browser, "Once upon a time")
    wait_until_idle(browser)
    generated = browser.find_element(By.CSS_SELECTOR, "#output .generated").text
    check(generated.strip(), "the completion is empty")
    check(text(browser, "output").startswith("Once upon a time"), "the prompt is not shown first")
    check(not text(browser, "error"), "error after a good completion: %r" % text(browser, "error"))
    check_stats(browser)


def new_chat(browser):
    """Back to chat, a fresh conversation, one answer: the picture for the docs."""
    browser.find_element(By.ID, "mode-chat").click()
    check(not browser.find_element(By.ID, "output").is_displayed(), "the output stays shown")
    browser.find_element(By.ID, "reset").click()
    check(not browser.find_elements(By.CSS_SELECTOR, "#messages .msg"), "New chat kept messages")
    set_field(browser, "max-tokens", "120")
    send(browser, "Tell me a story about a cat.")
    wait_until_idle(browser)
    check_stats(browser)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, model, screenshot = sys.argv[1:]
    if not os.path.exists(model):
        print("skip: model not present (%s)" % model)
        sys.exit(77)
    chromium, driver = find_browser()
    artifacts = os.path.dirname(os.path.abspath(screenshot))
    os.makedirs(artifacts, exist_ok=True)

    server, port = start_server(binary, model, "--api-key", API_KEY,
                                "--served-model-name", MODEL_NAME)
    browser = None
    try:
        browser = open_browser(chromium, driver)
        browser.get("http://127.0.0.1:%d/" % port)
        check(browser.title == "Baton Playground", "title: %r" % browser.title)
        unlock_with_api_key(browser)
        chat(browser)
        completion(browser)
        browser.save_screenshot(os.path.join(artifacts, "playground-completion.png"))

        new_chat(browser)
        browser.save_screenshot(screenshot)
        set_viewport(browser, 390, 844)
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        check(overflow <= 0, "the page is %dpx wider than a 390px screen" % overflow)
        # As a phone first shows it: settings folded away.
        browser.find_element(By.CSS_SELECTOR, "#settings summary").click()
        browser.save_screenshot(os.path.join(artifacts, "playground-narrow.png"))
        print("playground: chat, streaming, stats, errors and completion passed; screenshots in "
              + artifacts)
    finally:
        if browser is not None:
            browser.quit()
        code = stop_server(server)
    sys.exit(code)


if __name__ == "__main__":
    main()
