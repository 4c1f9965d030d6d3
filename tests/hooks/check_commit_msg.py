#!/usr/bin/env python3
"""scripts/hooks/commit-msg accepts the messages the README's commit rules allow and rejects the
others: a subject over 72 characters, a subject ending with a period, a body without the blank
line after the subject. Each message is fed to the hook as a file and its exit code checked;
then the hook runs as git runs it (core.hooksPath in a scratch repository), and a rejected
message must leave no commit.
Usage: check_commit_msg.py HOOK"""
import os
import subprocess
import sys
import tempfile

ACCEPTED = {
    "subject only": "Add a glossary of the terms the docs use\n",
    "subject and body": "Add a glossary\n\nEvery term links the page that defines it.\n",
    "72 characters": "A" * 72 + "\n",
    "72 characters, not bytes": "Ré" * 36 + "\n",
    "comments and a verbose diff": "Add a glossary\n\n# Please enter the commit message\n"
                                   "# ------------------------ >8 ------------------------\n"
                                   "diff --git a/x b/x\nno blank line here.\n",
    "leading blank lines and trailing spaces": "\n\nAdd a glossary   \n\nBody.\n",
    "a fixup of a long subject": "fixup! " + "A" * 72 + "\n",
    "empty (git refuses it itself)": "# only a comment\n",
}
REJECTED = {
    "73 characters": "A" * 73 + "\n",
    "a final period": "Add a glossary.\n",
    "no blank line before the body": "Add a glossary\nEvery term links the page that defines it.\n",
    "a long subject with a body": "B" * 80 + "\n\nBody.\n",
}


def hook_exit(hook, message, workdir):
    path = os.path.join(workdir, "MSG")
    with open(path, "w", encoding="utf-8") as f:
        f.write(message)
    p = subprocess.run([hook, path], capture_output=True, text=True, cwd=workdir)
    return p.returncode, p.stderr


def main(hook):
    hook = os.path.abspath(hook)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        for name, message in ACCEPTED.items():
            code, err = hook_exit(hook, message, work)
            if code != 0:
                failures.append(f"accepted case '{name}' exited {code}: {err.strip()}")
        for name, message in REJECTED.items():
            code, err = hook_exit(hook, message, work)
            if code == 0:
                failures.append(f"rejected case '{name}' exited 0")
            elif "commit-msg:" not in err:
                failures.append(f"rejected case '{name}' gave no reason: {err!r}")

        # As git runs it: the hooks directory of the checkout as core.hooksPath.
        repo = os.path.join(work, "repo")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid",
                   GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
        git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, env=env)
        subprocess.run(["git", "init", "-q", repo], check=True, env=env)
        git("config", "core.hooksPath", os.path.dirname(hook))
        bad = git("commit", "-q", "--allow-empty", "-m", "Add a glossary.")
        if bad.returncode == 0 or git("rev-parse", "-q", "--verify", "HEAD").returncode == 0:
            failures.append("git commit with a final period in the subject succeeded")
        good = git("commit", "-q", "--allow-empty", "-m", "Add a glossary", "-m", "Body.")
        if good.returncode != 0:
            failures.append(f"git commit of a good message failed: {good.stderr.strip()}")

    for f in failures:
        print("check_commit_msg: " + f)
    total = len(ACCEPTED) + len(REJECTED) + 2
    print(f"check_commit_msg: {total - len(failures)} of {total} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
