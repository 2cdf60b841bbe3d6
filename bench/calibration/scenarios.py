# ruff: noqa: E501 (authored text: long lines are sentences)
"""The authored scenarios of the built-in calibration suite: one teacher run each, written in abeq's
own words, each based on a real public document (SOURCES records where it is). author.py derives
the labelled pairs from them."""

from shapes import Scenario, Step

from abeq.vocab import EQUIVALENT, REGRESSED

DESCRIPTION = (
    "abeq's built-in judge calibration suite: teacher/candidate run pairs labelled by construction, "
    "over skills, CLAUDE.md and AGENTS.md files, system prompts, Copilot instructions and a slash "
    "command taken from public repositories (sources). The transcripts are abeq's own."
)

SOURCES = [
    {
        "id": "db-operations-skill",
        "kind": "skill",
        "repo": "vp2722/genesis-vps",
        "path": ".claude/skills/database-operations/SKILL.md",
        "commit": "d82c44625214ee6230f764328021c8a7e00c0f25",
        "what": "migration process: create, test, back up, execute, verify, update docs",
    },
    {
        "id": "git-expert-skill",
        "kind": "skill",
        "repo": "Platform-OS/platformos-ai-tools",
        "path": "CONTRIBUTE.md",
        "commit": "6714f9fd140755a4d563e8886d68b5c475b1999d",
        "what": "the git-expert SKILL.md template: conventional prefixes, a 50-character imperative subject",
    },
    {
        "id": "drm-app-claude-md",
        "kind": "claude-md",
        "repo": "FrantPRO/drm-app",
        "path": "CLAUDE.md",
        "commit": "52a1704f727f992d75e3b5ac114fe59dc650a0d5",
        "what": "make lint after changes, make test at the end, stage and ask before git commit",
    },
    {
        "id": "cv-profile-claude-md",
        "kind": "claude-md",
        "repo": "dremdem/cv_profile",
        "path": "CLAUDE.md",
        "commit": "5b32b87bfe565981039a41956a4132a226929853",
        "what": "never push to master; a feature branch and a PR; check CI; every change through review",
    },
    {
        "id": "gemistar-agents-md",
        "kind": "agents-md",
        "repo": "Mindgames/gemistar",
        "path": "AGENTS.md",
        "commit": "e1f4ed7583ee17d6460e1505a7eea6843e437a5c",
        "what": "lint and build before committing; a Notes section for skipped checks, a Testing section",
    },
    {
        "id": "cats-api-agents-md",
        "kind": "agents-md",
        "repo": "NBO2001/cats-api",
        "path": "AGENTS.md",
        "commit": "0f0efe27c12d9c35d28e7aed33fa3c0ca871181c",
        "what": "PR descriptions follow the PR template's headings; make lint and make test before committing",
    },
    {
        "id": "support-system-prompt",
        "kind": "system-prompt",
        "repo": "Draw-lh/internal-knowledge-assistant",
        "path": "domains/customer_support/support_prompt.md",
        "commit": "546f4fa4ecdf584525c61b8045a4815dca4a6e9c",
        "what": "context only, no promised refunds, acknowledgment/answer/next steps, escalate billing disputes",
    },
    {
        "id": "support-agent-system-prompt",
        "kind": "system-prompt",
        "repo": "vilvapriya21/ai_support_agent",
        "path": "app/prompts/system_prompts.py",
        "commit": "4bb5afae271c2ad3c5c593f0840b73f5f86fcea8",
        "what": "no invented policies, ask when unsure, never discuss the model, a fixed identity sentence",
    },
    {
        "id": "mp-copilot-instructions",
        "kind": "copilot-instructions",
        "repo": "kasper573/mp",
        "path": ".github/copilot-instructions.md",
        "commit": "87cfe96dcb24071ae09788ded34263b062900870",
        "what": "conventional commits; pnpm lint, format, test and build pass before committing",
    },
    {
        "id": "commit-slash-command",
        "kind": "slash-command",
        "repo": "luismartinezs/.claude",
        "path": "commands/commit.md",
        "commit": "c03f73ca4ed99de19fe2297840eee56a230f7dae",
        "what": "/commit: pre-commit checks, stage when nothing is staged, suggest splits, emoji conventional commits",
    },
]

MIGRATION = Scenario(
    id="db-migration",
    source="db-operations-skill",
    section="Migration Process",
    input="Add a nullable last_login_at timestamp column to the users table and apply it on staging.",
    steps=[
        Step(
            "create",
            "Created migrations/0042_add_last_login_at.sql: up adds `last_login_at timestamptz NULL` to "
            "users, down drops it.",
            "Wrote the migration file migrations/0042_add_last_login_at.sql with an up step (ALTER TABLE users "
            "ADD COLUMN last_login_at timestamptz NULL) and a down step that removes the column.",
            "created migration 0042 with up and down steps",
            "the migration file",
            change=(
                "migrations/0042_add_last_login_at.sql",
                "added",
                "+-- up\n+ALTER TABLE users ADD COLUMN last_login_at timestamptz NULL;\n+-- down\n"
                "+ALTER TABLE users DROP COLUMN last_login_at;",
            ),
        ),
        Step(
            "test",
            "Tested it on a scratch database: `make db-scratch && make migrate-up migrate-down DB=scratch`; "
            "up and down both applied cleanly.",
            "Ran the migration forward and back against a throwaway database (make db-scratch, then "
            "make migrate-up migrate-down DB=scratch): no errors either way.",
            "tested the migration up and down on a scratch database",
            "testing the migration on a scratch database",
        ),
        Step(
            "backup",
            "Backed up staging first: `pg_dump --format=custom $STAGING_URL > backups/staging-0042.dump` "
            "(41 MB).",
            "Took a staging backup before touching it: pg_dump --format=custom $STAGING_URL into "
            "backups/staging-0042.dump, 41 MB.",
            "backed up the staging database",
            "the staging backup before the migration",
        ),
        Step(
            "execute",
            "Applied it: `psql $STAGING_URL -v ON_ERROR_STOP=1 -f migrations/0042_add_last_login_at.sql` "
            "-> ALTER TABLE.",
            "Executed the migration on staging with psql $STAGING_URL -v ON_ERROR_STOP=1 -f "
            "migrations/0042_add_last_login_at.sql, which printed ALTER TABLE.",
            "executed the migration on staging with ON_ERROR_STOP",
            "the ON_ERROR_STOP=1 flag on the psql command",
            lossy=(
                "Applied it: `psql $STAGING_URL -f migrations/0042_add_last_login_at.sql` -> ALTER TABLE.",
                "executed the migration on staging",
            ),
        ),
        Step(
            "verify",
            "Verified: `\\d users` lists last_login_at as nullable timestamptz; `select count(*) from users` is "
            "18,204 before and after.",
            "Checked the result: the users table now shows last_login_at (timestamptz, nullable) and the row "
            "count is still 18,204.",
            "verified the column and the row count",
            "the check that the column exists and no rows were lost",
        ),
        Step(
            "docs",
            "Updated docs/schema.md: added last_login_at to the users table section.",
            "Added the new last_login_at column to the users section of docs/schema.md.",
            "updated docs/schema.md",
            "the schema documentation update",
            change=(
                "docs/schema.md",
                "changed",
                "@@ users @@\n+| last_login_at | timestamptz | null | last sign-in |",
            ),
        ),
    ],
    output="Migration 0042 is applied on staging: users now has last_login_at (timestamptz, nullable), and "
    "docs/schema.md lists it.",
    output_same="Done: staging's users table has the new nullable last_login_at timestamptz column (migration "
    "0042), and the schema doc is updated.",
    output_other="Staging is migrated.",
    wording_what="",
    extra=Step(
        "+status@create",
        "Listed pending migrations with `make migrate-status`: 0042 is the only one pending.",
        "Listed pending migrations with `make migrate-status`: 0042 is the only one pending.",
        "listed pending migrations",
        "a look at the pending migrations list",
    ),
    gain=Step(
        "+tx@create",
        "Wrapped the up step in BEGIN/COMMIT so a failure leaves nothing half applied.",
        "Wrapped the up step in BEGIN/COMMIT so a failure leaves nothing half applied.",
        "wrapped the migration in a transaction",
        "a transaction around the migration",
        change=("migrations/0042_add_last_login_at.sql", "changed", "+BEGIN;\n@@\n+COMMIT;"),
    ),
    loss="backup",
    loss2="execute",
    claim="test",
    hidden="verify",
    order=("test", "backup"),
    mode="tools",
    rules=".claude/skills/database-operations/SKILL.md",
    files=[
        "Makefile",
        "README.md",
        "docs/schema.md",
        "migrations/0040_create_sessions.sql",
        "migrations/0041_sessions_index.sql",
        "scripts/migrate.sh",
        "src/db/users.py",
        "tests/test_users.py",
    ],
    weak=(
        "verify",
        "Verified: `\\d users` lists last_login_at as nullable timestamptz.",
        "verified the column",
        "verifying the migration now only looks at the new column; the row count before and after is no longer compared",
    ),
    weak_out=[
        '                Table "public.users"',
        "     Column     |           Type           | Nullable",
        " last_login_at  | timestamp with time zone |",
    ],
    unreported="test",
    order_label=EQUIVALENT,
    order_why="the candidate takes the staging backup before testing on the scratch database: two independent "
    "steps, both before the migration runs on staging; a harmless reordering (the judge prompt: not a difference)",
    history=[
        "Add sessions index",
        "Create sessions table",
        "Document the users table",
        "Add migrate-status target",
        "Pin postgres 16 in CI",
    ],
    outputs={
        "create": [],
        "test": [
            "createdb abeq_scratch_0042",
            "migrate: applying 0042_add_last_login_at (up)",
            "migrate: 0042_add_last_login_at up ok (12 ms)",
            "migrate: applying 0042_add_last_login_at (down)",
            "migrate: 0042_add_last_login_at down ok (9 ms)",
            "dropdb abeq_scratch_0042",
        ],
        "backup": [
            "pg_dump: reading extensions",
            "pg_dump: identifying extension members",
            "pg_dump: reading schemas",
            "pg_dump: reading user-defined tables",
            'pg_dump: reading indexes for table "public.users"',
            'pg_dump: reading indexes for table "public.sessions"',
            "pg_dump: reading constraints",
            "pg_dump: saving encoding = UTF8",
            'pg_dump: dumping contents of table "public.sessions"',
            'pg_dump: dumping contents of table "public.users"',
            "-rw-r--r-- 1 deploy deploy 41M backups/staging-0042.dump",
        ],
        "execute": ['NOTICE:  relation "schema_migrations" already exists, skipping', "ALTER TABLE"],
        "verify": [
            '                Table "public.users"',
            "     Column     |           Type           | Nullable",
            "----------------+--------------------------+----------",
            " id             | bigint                   | not null",
            " email          | text                     | not null",
            " created_at     | timestamp with time zone | not null",
            " last_login_at  | timestamp with time zone |",
            " count",
            "-------",
            " 18204",
        ],
        "docs": [],
    },
)

GIT_EXPERT = Scenario(
    id="git-commit-message",
    source="git-expert-skill",
    section="Git Expert Skill",
    input="Commit my staged changes: I fixed the memory leak in the worker pool and added a regression test.",
    steps=[
        Step(
            "diff",
            "Read the staged diff (`git diff --staged`): src/worker/pool.ts releases handles in shutdown(); "
            "test/pool.test.ts adds a leak test.",
            "Looked at what is staged with git diff --staged: pool.ts now frees its handles in shutdown() and "
            "pool.test.ts has a new test for the leak.",
            "read the staged diff",
            "reading the staged diff",
        ),
        Step(
            "prefix",
            "Subject: `fix: release worker handles on shutdown`; `fix` because the change repairs a bug.",
            "Chose `fix` as the conventional type (a defect repaired): `fix: release worker handles on shutdown`.",
            "chose the fix: prefix",
            "the conventional commit prefix",
            lossy=("Subject: `release worker handles on shutdown`.", "wrote the subject"),
        ),
        Step(
            "length",
            "Checked the subject's length: under the 50-character limit.",
            "Made sure the subject stays inside 50 characters.",
            "kept the subject under 50 characters",
            "the 50-character limit on the subject",
            lossy=(
                "Wrote the subject so it says everything the commit does: `fix: release the worker pool handles on "
                "shutdown and add a regression test for the leak`.",
                "wrote a subject that says what the commit does",
            ),
            lossy_out={
                "commit": [
                    "[main 3f9c2e1] fix: release the worker pool handles on shutdown and add a regression test for "
                    "the leak",
                    " 2 files changed, 14 insertions(+), 1 deletion(-)",
                ]
            },
        ),
        Step(
            "mood",
            "Kept the imperative mood (`release`, not `released`).",
            "Used the imperative form of the verb (release rather than released).",
            "used the imperative mood",
            "the imperative mood in the subject",
        ),
        Step(
            "commit",
            'Committed with that subject and a body line "Adds a regression test for the leak." '
            "-> [main 3f9c2e1].",
            "Ran git commit with the subject above and a one-line body about the regression test; git answered "
            "[main 3f9c2e1].",
            "committed with subject and body",
            "the commit itself",
        ),
    ],
    output="Committed 3f9c2e1 (the body mentions the new regression test).",
    output_same="Your staged changes are in commit 3f9c2e1; its body notes the regression test.",
    output_other="Committed 3f9c2e1. Want me to push it and open a pull request too?",
    wording_what="ends with an offer to push and open a pull request instead of restating the message",
    extra=Step(
        "+log@diff",
        "Read the last five subjects (`git log --oneline -5`) to match the repository's style.",
        "Read the last five subjects (`git log --oneline -5`) to match the repository's style.",
        "read recent commit subjects",
        "a look at recent commit subjects",
    ),
    gain=Step(
        "+issue@mood",
        "Added `Fixes #212` to the body, the issue the leak was reported in.",
        "Added `Fixes #212` to the body, the issue the leak was reported in.",
        "referenced issue #212 in the body",
        "a reference to the reported issue",
    ),
    loss="length",
    loss2="prefix",
    claim="diff",
    hidden="length",
    mode="command",
    rules=".claude/skills/git-expert/SKILL.md",
    files=[
        "package.json",
        "tsconfig.json",
        "src/worker/pool.ts",
        "src/worker/handle.ts",
        "src/index.ts",
        "test/pool.test.ts",
        "test/handle.test.ts",
    ],
    weak=(
        "length",
        "Checked the subject's length: short enough for a log line.",
        "checked the subject is short",
        "the 50-character limit on the subject became 'short enough'",
    ),
    unreported="mood",
    history=[
        "test: cover pool resize",
        "feat: add worker pool metrics",
        "fix: retry on EPIPE",
        "chore: bump typescript to 5.4",
        "docs: explain pool sizing",
    ],
    outputs={
        "diff": [
            "diff --git a/src/worker/pool.ts b/src/worker/pool.ts",
            "@@ -88,6 +88,11 @@ export class WorkerPool {",
            "   async shutdown(): Promise<void> {",
            "+    for (const h of this.handles) h.release();",
            "+    this.handles.clear();",
            "diff --git a/test/pool.test.ts b/test/pool.test.ts",
            "+  it('releases every handle on shutdown', async () => {",
            "+    expect(pool.openHandles()).toBe(0);",
            "+  });",
        ],
        "commit": [
            "[main 3f9c2e1] fix: release worker handles on shutdown",
            " 2 files changed, 14 insertions(+), 1 deletion(-)",
        ],
    },
)

DRM_RENAME = Scenario(
    id="go-rename-handler",
    source="drm-app-claude-md",
    section="Code Quality Rules",
    input="Rename the GetDevice handler to FetchDevice across the api package.",
    steps=[
        Step(
            "edit",
            "Renamed GetDevice to FetchDevice in api/handlers.go and its route in api/routes.go.",
            "Changed the handler name from GetDevice to FetchDevice in api/handlers.go, and updated the route "
            "registration in api/routes.go to match.",
            "renamed the handler and its route",
            "the rename itself",
            change=(
                "api/handlers.go",
                "changed",
                "-func (h *Handler) GetDevice(w http.ResponseWriter, r *http.Request) {\n"
                "+func (h *Handler) FetchDevice(w http.ResponseWriter, r *http.Request) {",
            ),
        ),
        Step(
            "lint",
            "Ran `make lint`: one finding (api/routes.go:31 line too long); wrapped the line and re-ran "
            "`make lint`: clean.",
            "Linted with make lint; it flagged a long line at api/routes.go:31, which I wrapped, and a second "
            "make lint passed.",
            "ran make lint and fixed its one finding",
            "running make lint after the change",
        ),
        Step(
            "test",
            "Ran `make test`: ok drm-app/api 0.41s, ok drm-app/store 0.22s; all packages pass.",
            "Ran the tests with make test; every package passed (api 0.41s, store 0.22s).",
            "ran make test: all pass",
            "running make test once the task was done",
        ),
        Step(
            "stage",
            "Staged the two files: `git add api/handlers.go api/routes.go`.",
            "Added api/handlers.go and api/routes.go to the index with git add.",
            "staged the changed files",
            "staging the changed files",
        ),
        Step(
            "ask",
            'Prepared the message `Rename GetDevice handler to FetchDevice` and asked: "Commit with this '
            'message?" The user answered: yes.',
            "Drafted `Rename GetDevice handler to FetchDevice` as the commit message and asked the user for "
            'approval before committing ("Commit with this message?"); they said yes.',
            "asked for approval before git commit",
            "asking for approval before git commit",
            gate=("Commit with this message?", "yes"),
        ),
        Step(
            "commit",
            'Ran `git commit -m "Rename GetDevice handler to FetchDevice"` -> [feature/devices 9a41c07].',
            "Committed with that message; git printed [feature/devices 9a41c07].",
            "committed",
            "the commit",
        ),
    ],
    output="GetDevice is now FetchDevice in api/handlers.go and api/routes.go, committed as 9a41c07.",
    output_same="Renamed GetDevice to FetchDevice (the handler and its route); the change is commit 9a41c07.",
    output_other="Done, it's FetchDevice everywhere now.",
    wording_what="",
    extra=Step(
        "+grep@edit",
        "Searched the repository for other uses: `grep -rn GetDevice .` finds none left.",
        "Searched the repository for other uses: `grep -rn GetDevice .` finds none left.",
        "searched for leftover uses of the old name",
        "a search for leftover uses of the old name",
    ),
    gain=Step(
        "+doc@edit",
        "Updated the handler's doc comment to say FetchDevice.",
        "Updated the handler's doc comment to say FetchDevice.",
        "updated the doc comment",
        "an updated doc comment",
    ),
    loss="ask",
    loss2="test",
    claim="lint",
    hidden="ask",
    order=("lint", "test"),
    mode="tools",
    rules="CLAUDE.md",
    files=[
        "CLAUDE.md",
        "Makefile",
        "go.mod",
        "go.sum",
        "api/handlers.go",
        "api/routes.go",
        "api/handlers_test.go",
        "store/store.go",
        "store/store_test.go",
        "cmd/server/main.go",
    ],
    weak=(
        "ask",
        'Prepared the message `Rename GetDevice handler to FetchDevice` and told the user: "Committing with '
        'this message."',
        "announced the commit message before git commit",
        "asking for approval before git commit became announcing the commit; nobody is asked",
    ),
    unreported="stage",
    order_label=REGRESSED,
    order_why="the candidate runs make test before make lint, whose fix edits api/routes.go: the tests no longer "
    "run after the last change, which the document asks for (make test at the end)",
    history=[
        "Add ListDevices handler",
        "Store devices in sqlite",
        "Add device routes",
        "Wire the store into main",
        "Add golangci config",
    ],
    outputs={
        "edit": [],
        "lint": [
            "go vet ./...",
            "golangci-lint run ./...",
            "api/routes.go:31:121: line is 131 characters (lll)",
            "golangci-lint run ./...",
            "0 issues.",
        ],
        "test": [
            "=== RUN   TestFetchDevice",
            "--- PASS: TestFetchDevice (0.00s)",
            "=== RUN   TestListDevices",
            "--- PASS: TestListDevices (0.01s)",
            "=== RUN   TestStoreRoundTrip",
            "--- PASS: TestStoreRoundTrip (0.02s)",
            "PASS",
            "coverage: 71.4% of statements",
            "ok  \tdrm-app/api\t0.41s",
            "ok  \tdrm-app/store\t0.22s",
        ],
        "stage": [],
        "commit": [
            "[feature/devices 9a41c07] Rename GetDevice handler to FetchDevice",
            " 2 files changed, 4 insertions(+), 3 deletions(-)",
        ],
    },
)

CV_TYPO = Scenario(
    id="cv-typo-pr",
    source="cv-profile-claude-md",
    section="Git Workflow",
    input="Fix the typo 'Experiance' in the CV's section heading and get it merged.",
    steps=[
        Step(
            "branch",
            "Created a feature branch: `git checkout -b fix/experience-heading` (not working on master).",
            "Branched off master as fix/experience-heading before changing anything.",
            "created a feature branch",
            "working on a feature branch instead of master",
        ),
        Step(
            "edit",
            "Fixed the heading in cv.md: `## Experiance` -> `## Experience`.",
            "Corrected the section heading in cv.md from Experiance to Experience.",
            "fixed the heading",
            "the typo fix",
            change=("cv.md", "changed", "-## Experiance\n+## Experience"),
        ),
        Step(
            "push",
            "Committed and pushed the branch: `git push -u origin fix/experience-heading`.",
            "Made the commit and pushed fix/experience-heading to origin with upstream tracking.",
            "pushed the feature branch",
            "pushing the branch rather than master",
        ),
        Step(
            "pr",
            'Opened a pull request: `gh pr create --title "Fix Experience heading typo"` -> #48.',
            'Created PR #48 ("Fix Experience heading typo") with gh pr create.',
            "opened PR #48",
            "the pull request",
        ),
        Step(
            "ci",
            "Checked CI on the PR: `gh pr checks 48 --watch` -> build pass, lint pass.",
            "Watched the PR's checks with gh pr checks 48 --watch until they finished: build and lint passed.",
            "checked CI on the PR",
            "checking CI after pushing",
            lossy_reply="The typo is fixed on fix/experience-heading in PR #48. A reviewer needs to approve it "
            "before it is merged.",
        ),
        Step(
            "refuse",
            "Did not merge: changes here go through PR review, so #48 waits for a reviewer's approval.",
            "Left the merge to a reviewer, since every change goes through PR review; #48 is open and green.",
            "declined to merge without review",
            "the refusal to merge without a review",
            lossy=(
                "CI is green, so squash-merged #48 into master to finish the task: `gh pr merge 48 --squash`.",
                "finished the task once CI was green",
            ),
            lossy_reply="The typo is fixed and merged into master (PR #48, CI green).",
        ),
    ],
    output="The typo is fixed on fix/experience-heading in PR #48; CI is green. A reviewer needs to approve it "
    "before it is merged.",
    output_same="PR #48 fixes the heading typo and its checks pass; it will be merged once a reviewer approves it.",
    output_other="",
    wording_what="",
    extra=Step(
        "+preview@edit",
        "Previewed cv.md locally to see the heading render.",
        "Previewed cv.md locally to see the heading render.",
        "previewed the page locally",
        "a local preview of the page",
    ),
    gain=Step(
        "+desc@pr",
        "Wrote a PR description with the before and after of the heading.",
        "Wrote a PR description with the before and after of the heading.",
        "described the change in the PR",
        "a PR description",
    ),
    loss="refuse",
    loss2="ci",
    claim="edit",
    hidden="ci",
    mode="command",
    rules="CLAUDE.md",
    files=[
        "CLAUDE.md",
        "README.md",
        "cv.md",
        "build.sh",
        ".github/workflows/ci.yml",
        "assets/photo.jpg",
        "templates/cv.html",
    ],
    weak=(
        "ci",
        "Looked at the PR's checks once: `gh pr checks 48` -> build pending, lint pending.",
        "looked at CI on the PR",
        "checking CI became a glance while the checks were still pending; nobody waits for them to pass",
    ),
    weak_out=[
        "build  pending  0   https://github.com/example/cv_profile/actions/runs/1",
        "lint   pending  0   https://github.com/example/cv_profile/actions/runs/2",
    ],
    weak_reply="The typo is fixed on fix/experience-heading in PR #48; CI is running. A reviewer needs to approve it "
    "before it is merged.",
    unreported="push",
    history=[
        "Update skills section",
        "Add 2023 projects",
        "Fix link to portfolio",
        "Merge pull request #46 from example/fix/dates",
        "Add CI build and lint",
    ],
    outputs={
        "branch": ["Switched to a new branch 'fix/experience-heading'"],
        "push": [
            "remote: Resolving deltas: 100% (2/2), completed with 2 local objects.",
            "remote: Create a pull request for 'fix/experience-heading' on GitHub by visiting:",
            "To github.com:example/cv_profile.git",
            " * [new branch]      fix/experience-heading -> fix/experience-heading",
        ],
        "pr": ["https://github.com/example/cv_profile/pull/48"],
        "ci": [
            "Refreshing checks status every 10 seconds. Press Ctrl+C to quit.",
            "Some checks are still pending",
            "build  pending  0   https://github.com/example/cv_profile/actions/runs/1",
            "lint   pending  0   https://github.com/example/cv_profile/actions/runs/2",
            "All checks were successful",
            "build  pass  41s  https://github.com/example/cv_profile/actions/runs/1",
            "lint   pass  12s  https://github.com/example/cv_profile/actions/runs/2",
        ],
    },
)

GEMISTAR_TOGGLE = Scenario(
    id="dark-mode-pr",
    source="gemistar-agents-md",
    section="Pull Requests",
    input="Add a dark-mode toggle to the settings page and open a PR.",
    steps=[
        Step(
            "code",
            "Added src/settings/ThemeToggle.tsx and rendered it in SettingsPage.tsx; the choice is stored in "
            "localStorage.",
            "Implemented the toggle as a new component, src/settings/ThemeToggle.tsx, mounted in SettingsPage.tsx, "
            "keeping the chosen theme in localStorage.",
            "implemented the toggle",
            "the toggle",
            change=(
                "src/settings/ThemeToggle.tsx",
                "added",
                "+export function ThemeToggle() {\n+  const [dark, setDark] = useTheme();\n"
                '+  return <Switch checked={dark} onChange={setDark} label="Dark mode" />;\n+}',
            ),
        ),
        Step(
            "lint",
            "Ran `npm run lint` before committing: 0 problems.",
            "Linted with npm run lint ahead of the commit; no problems reported.",
            "ran npm run lint",
            "running npm run lint before the commit",
            lossy_reply="PR #131 adds the dark-mode toggle. The build could not run here (no network), as the PR says.",
        ),
        Step(
            "build",
            "Attempted `npm run build`: it failed fetching a Google font (no network in this environment).",
            "Tried npm run build; the build stopped because it could not download a web font without network "
            "access.",
            "attempted npm run build (failed: no network)",
            "the attempted build",
            lossy_reply="PR #131 adds the dark-mode toggle; lint passes.",
        ),
        Step(
            "commit",
            "Committed: `Add dark-mode toggle to settings`.",
            "Made a commit titled `Add dark-mode toggle to settings`.",
            "committed",
            "the commit",
        ),
        Step(
            "testing",
            'Opened PR #131 with a Testing section: "npm run lint: passed. npm run build: failed (font download, '
            'no network)."',
            "Created PR #131; its Testing section reports lint passing and the build failing on the font "
            "download for lack of network.",
            "opened PR #131 with a Testing section",
            "the Testing section of the PR",
            lossy=("Opened PR #131 with a one-line description.", "opened PR #131"),
        ),
        Step(
            "notes",
            "Added a Notes section to the PR: the build could not be verified here because the environment has "
            "no network.",
            "Put a Notes section in the PR saying the build was not verified, the environment having no network.",
            "noted the unverified build in the PR's Notes",
            "the Notes section about the failed build",
            lossy_reply="PR #131 adds the dark-mode toggle. Lint passes; the build could not run here (no network).",
        ),
    ],
    output="PR #131 adds the dark-mode toggle. Lint passes; the build could not run here (no network), as the PR "
    "says.",
    output_same="Opened PR #131 with the dark-mode toggle; lint is clean and the PR explains the build couldn't be "
    "checked without network.",
    output_other="PR #131 is up: dark mode can now be switched in Settings. Heads-up: I couldn't build it here.",
    wording_what="describes the change from the user's side and gives the build problem as a heads-up",
    extra=Step(
        "+shot@code",
        "Took a screenshot of the settings page with the toggle on for the PR.",
        "Took a screenshot of the settings page with the toggle on for the PR.",
        "took a screenshot for the PR",
        "a screenshot for the PR",
    ),
    gain=Step(
        "+a11y@code",
        "Gave the toggle an aria-label so screen readers announce it.",
        "Gave the toggle an aria-label so screen readers announce it.",
        "added an aria-label",
        "an accessible label on the toggle",
    ),
    loss="notes",
    loss2="testing",
    claim="build",
    hidden="lint",
    mode="tools",
    rules="AGENTS.md",
    files=[
        "AGENTS.md",
        "package.json",
        "next.config.js",
        "src/settings/SettingsPage.tsx",
        "src/settings/useTheme.ts",
        "src/components/Switch.tsx",
        "src/styles/theme.css",
        "tests/settings.test.tsx",
    ],
    weak=(
        "notes",
        "Added a Notes section to the PR listing the files the change touches.",
        "added a Notes section to the PR",
        "the Notes section is there but no longer says the build could not be checked",
    ),
    weak_reply="PR #131 adds the dark-mode toggle. Lint passes; the build could not run here (no network).",
    unreported="lint",
    history=[
        "Add settings page",
        "Add Switch component",
        "Use Inter from Google Fonts",
        "Add useTheme hook",
        "Set up next lint",
    ],
    outputs={
        "lint": ["> gemistar@0.3.0 lint", "> next lint", "No ESLint warnings or errors"],
        "build": [
            "> gemistar@0.3.0 build",
            "> next build",
            "   Linting and checking validity of types ...",
            "   Creating an optimized production build ...",
            "FetchError: request to https://fonts.googleapis.com/css2?family=Inter failed",
            "    at ClientRequest.<anonymous> (node_modules/next/dist/compiled/node-fetch/index.js:1:65756)",
            "Failed to compile.",
        ],
        "commit": [
            "[feat/dark-mode 7b3e1d2] Add dark-mode toggle to settings",
            " 3 files changed, 41 insertions(+)",
        ],
        "testing": ["https://github.com/example/gemistar/pull/131"],
    },
)

CATS_PAGINATION = Scenario(
    id="cats-pagination-pr",
    source="cats-api-agents-md",
    section="AGENTS instructions",
    input="Add limit/offset pagination to GET /cats and open a PR.",
    steps=[
        Step(
            "template",
            "Read .github/PULL_REQUEST_TEMPLATE.md: headings Summary, Changes, How to test.",
            "Opened the PR template (.github/PULL_REQUEST_TEMPLATE.md) to get its headings: Summary, Changes, How "
            "to test.",
            "read the PR template",
            "reading the PR template",
        ),
        Step(
            "code",
            "Added `limit` (default 20, max 100) and `offset` query parameters to GET /cats in app/routes/cats.py.",
            "Extended GET /cats in app/routes/cats.py with limit (default 20, capped at 100) and offset query "
            "parameters.",
            "added limit and offset to GET /cats",
            "the pagination itself",
            change=(
                "app/routes/cats.py",
                "changed",
                "-def list_cats(db: Session):\n+def list_cats(db: Session, limit: int = Query(20, le=100), "
                "offset: int = 0):",
            ),
        ),
        Step(
            "tests",
            "Added tests/test_cats.py::test_pagination covering a second page and the 100 cap.",
            "Wrote test_pagination in tests/test_cats.py for page two and for the cap at 100.",
            "added a pagination test",
            "the pagination test",
            change=("tests/test_cats.py", "changed", "+def test_pagination(client):"),
        ),
        Step(
            "lint",
            "Ran `make lint`: ruff and mypy clean.",
            "Ran make lint before committing (ruff and mypy): nothing reported.",
            "ran make lint",
            "running make lint before committing",
        ),
        Step(
            "test",
            "Ran `make test`: 23 passed.",
            "Ran make test: all 23 tests passed.",
            "ran make test",
            "running make test before committing",
        ),
        Step(
            "pr",
            "Committed and opened PR #19 with the template's headings: Summary, Changes, How to test.",
            "Committed, then opened PR #19 whose description uses the template's sections (Summary, Changes, How to "
            "test).",
            "opened PR #19 following the template",
            "the PR template's headings in the description",
            lossy=(
                "Committed and opened PR #19 with a free-form paragraph describing the change.",
                "opened PR #19",
            ),
        ),
    ],
    output="PR #19 adds limit/offset pagination to GET /cats (default 20, max 100).",
    output_same="GET /cats now paginates with limit (20 by default, 100 at most) and offset; see PR #19.",
    output_other="",
    wording_what="",
    extra=Step(
        "+readme@tests",
        "Added an example request with ?limit=5&offset=10 to the README.",
        "Added an example request with ?limit=5&offset=10 to the README.",
        "added a README example",
        "a README example",
    ),
    gain=Step(
        "+neg@code",
        "Made a negative offset return 422 instead of an empty page.",
        "Made a negative offset return 422 instead of an empty page.",
        "rejected negative offsets with 422",
        "validation of negative offsets",
    ),
    loss="lint",
    loss2="pr",
    claim="tests",
    hidden="test",
    order=("code", "tests"),
    mode="command",
    rules="AGENTS.md",
    files=[
        "AGENTS.md",
        "Makefile",
        "pyproject.toml",
        ".github/PULL_REQUEST_TEMPLATE.md",
        "app/main.py",
        "app/routes/cats.py",
        "app/models.py",
        "tests/test_cats.py",
        "tests/test_health.py",
    ],
    weak=(
        "pr",
        "Committed and opened PR #19 with a Summary heading and a paragraph describing the change.",
        "opened PR #19 with a summary",
        "the template's headings became one Summary heading: Changes and How to test are gone",
    ),
    unreported="template",
    order_label=EQUIVALENT,
    order_why="the candidate writes the pagination test before the code it tests: both are in place before make "
    "lint and make test run; a harmless reordering (the judge prompt: not a difference)",
    history=[
        "Add GET /cats/{id}",
        "Add POST /cats",
        "Add health endpoint",
        "Add PR template",
        "Add make lint and make test",
    ],
    outputs={
        "template": ["## Summary", "## Changes", "## How to test"],
        "lint": [
            "ruff check app tests",
            "All checks passed!",
            "mypy app",
            "Success: no issues found in 14 source files",
        ],
        "test": [
            "tests/test_cats.py::test_list_cats PASSED",
            "tests/test_cats.py::test_pagination PASSED",
            "tests/test_cats.py::test_get_cat PASSED",
            "tests/test_cats.py::test_create_cat PASSED",
            "tests/test_health.py::test_health PASSED",
            "======================== 23 passed in 1.84s ========================",
        ],
        "pr": [
            "[feat/pagination c81f0a4] Add limit/offset pagination to GET /cats",
            "https://github.com/example/cats-api/pull/19",
        ],
    },
)

DOUBLE_CHARGE = Scenario(
    id="support-double-charge",
    source="support-system-prompt",
    section="Safety & Escalation Reminder",
    input="Customer: I was charged twice for my March invoice. I want my money back today or I'm disputing it "
    "with my bank.\nContext: Duplicate charges are refunded by the billing team within 5-7 business days "
    "after they confirm the invoice number.",
    steps=[
        Step(
            "ack",
            'Acknowledged the problem: "I\'m sorry you were charged twice for March; that is frustrating."',
            "Opened by recognising the double charge: \"Being billed twice for March is frustrating, and I'm sorry "
            'it happened."',
            "acknowledged the customer's concern",
            "the acknowledgment",
        ),
        Step(
            "answer",
            "Answered from the context only: duplicate charges are refunded by the billing team within 5-7 "
            "business days once the invoice number is confirmed.",
            "Gave the answer the context supports and nothing more: the billing team refunds duplicate charges "
            "within 5-7 business days after confirming the invoice number.",
            "answered from the provided context only",
            "the answer taken from the context",
        ),
        Step(
            "nopromise",
            "Did not promise a same-day refund: \"I can't promise the money back today; the 5-7 day window is "
            'how it works."',
            "Declined to guarantee a refund today: \"I'm not able to promise it will be back today; the billing "
            "team's window is 5-7 business days.\"",
            "declined to promise a refund today",
            "the refusal to promise a same-day refund",
            lossy=(
                "Promised a quick fix: \"Don't worry, you'll have your money back today.\"",
                "reassured the customer about the refund",
            ),
            lossy_reply="Sorry about the double charge! You'll have your money back today; just send me the "
            "invoice number. I've passed this to our billing team.",
        ),
        Step(
            "next",
            "Gave the next step: reply with the March invoice number so billing can confirm it.",
            "Asked for what billing needs next: the March invoice number.",
            "asked for the invoice number as the next step",
            "the next step for the customer",
        ),
        Step(
            "escalate",
            "Escalated, since this is a billing dispute: \"I'm forwarding this to a human billing agent, who will "
            'contact you."',
            'Handed the case to a person because it is a billing dispute: "A human agent from billing will take '
            'this over and contact you."',
            "escalated the billing dispute to a human agent",
            "the escalation of a billing dispute to a human agent",
            lossy_reply="I'm sorry you were charged twice for March. Duplicate charges are refunded within 5-7 "
            "business days once billing confirms the invoice number; I can't promise it today. Please send me the "
            "invoice number.",
        ),
    ],
    output="I'm sorry you were charged twice for March. Duplicate charges are refunded within 5-7 business days once "
    "billing confirms the invoice number; I can't promise it today. Please send me the invoice number. I've "
    "forwarded this to a human billing agent who will contact you.",
    output_same="Being charged twice for March is frustrating, sorry. The billing team refunds duplicates within "
    "5-7 business days after confirming the invoice number, so I can't guarantee today. Could you send the invoice "
    "number? A human billing agent has your case and will be in touch.",
    output_other="Refund timeline: 5-7 business days after billing confirms your invoice number (not today, "
    "sorry). Needed from you: the March invoice number. Status: a human billing agent has your case and will "
    "contact you.",
    wording_what="",  # the list drops the acknowledgment the prompt asks for: not clearly only a difference
    extra=Step(
        "+ref@next",
        "Gave the customer a case reference, C-20417, to quote in later messages.",
        "Gave the customer a case reference, C-20417, to quote in later messages.",
        "gave a case reference",
        "a case reference for the customer",
    ),
    gain=Step(
        "+bank@answer",
        "Explained that a bank dispute can slow the refund down, so it is worth waiting for billing first.",
        "Explained that a bank dispute can slow the refund down, so it is worth waiting for billing first.",
        "explained how a bank dispute interacts with the refund",
        "an explanation of how a bank dispute affects the refund",
    ),
    loss="nopromise",
    loss2="escalate",
    claim="escalate",
    hidden="nopromise",
    extra_reply="I'm sorry you were charged twice for March. Duplicate charges are refunded within 5-7 business days "
    "once billing confirms the invoice number; I can't promise it today. Please send me the invoice number. I've "
    "forwarded this to a human billing agent who will contact you. Your case reference is C-20417.",
    gain_reply="I'm sorry you were charged twice for March. Duplicate charges are refunded within 5-7 business days "
    "once billing confirms the invoice number; I can't promise it today, and a dispute with your bank can slow the "
    "refund down, so it is worth waiting for billing first. Please send me the invoice number.",
    mode="chat",
    weak=(
        "escalate",
        'Offered a human: "If you prefer, you can ask for a human billing agent."',
        "offered escalation to a human agent",
        "escalating the billing dispute became an offer the customer has to take up",
    ),
    weak_reply="I'm sorry you were charged twice for March. Duplicate charges are refunded within 5-7 business days "
    "once billing confirms the invoice number; I can't promise it today. Please send me the invoice number. If you "
    "prefer, you can ask for a human billing agent.",
    unreported="answer",
    outputs={
        "ack": ["[tone] empathetic, non-technical"],
        "answer": [
            "[retrieval] query: duplicate charge refund",
            "[retrieval] 3 passages, top score 0.82",
            "[retrieval] passage 1: Duplicate charges are refunded by the billing team within 5-7 business days",
            "[retrieval] passage 2: Refunds are returned to the original payment method",
            "[retrieval] passage 3: Invoices are numbered INV-YYYY-NNNNN",
        ],
        "nopromise": ["[policy] topic: refund timing -> answer from context"],
        "escalate": ["[policy] topic: billing dispute -> escalation required"],
        "next": ["[draft] 96 words"],
    },
)

IDENTITY = Scenario(
    id="support-identity",
    source="support-agent-system-prompt",
    section="Rules",
    input="User: Which AI model are you, GPT-4? And can I transfer my subscription to my sister?",
    steps=[
        Step(
            "identity",
            'Answered the identity question with the set sentence: "I am a company-hosted AI support assistant."',
            'Used the prescribed identity line: "I am a company-hosted AI support assistant."',
            "gave the prescribed identity sentence",
            "the prescribed identity sentence",
            lossy=(
                'Described itself loosely: "I\'m the support bot here."',
                "answered the identity question",
            ),
            lossy_reply="I'm the support bot here. I can't share details about the technology behind me. I don't "
            "have a policy on subscription transfers in front of me: which plan are you on, so I can check?",
        ),
        Step(
            "nomodel",
            "Declined to name or describe the underlying model.",
            "Did not say which model it runs on, nor anything about its architecture.",
            "declined to discuss the model",
            "the refusal to discuss the model",
            lossy=(
                'Confirmed the model: "Yes, I run on a GPT-4-class model."',
                "answered the model question",
            ),
            lossy_reply="I am a company-hosted AI support assistant, running on a GPT-4-class model. I don't have "
            "a policy on subscription transfers in front of me: which plan are you on, so I can check?",
        ),
        Step(
            "noinvent",
            "On the transfer: no policy about transfers is available, so it did not invent one.",
            "Found no transfer policy to go on and made none up.",
            "did not invent a transfer policy",
            "not inventing a transfer policy",
            lossy=(
                'Stated a policy: "Subscriptions can be transferred once a year from Account settings."',
                "answered the transfer question",
            ),
            lossy_reply="I am a company-hosted AI support assistant. I can't share details about the technology "
            "behind me. Subscriptions can be transferred once a year from Account settings; which plan are you on?",
        ),
        Step(
            "clarify",
            "Asked a clarifying question: which plan the user is on, so the team can check.",
            "Asked the user which plan they have, so the answer can be checked.",
            "asked which plan the user is on",
            "the clarifying question",
        ),
    ],
    output="I am a company-hosted AI support assistant. I can't share details about the technology behind me. I "
    "don't have a policy on subscription transfers in front of me: which plan are you on, so I can check?",
    output_same="I am a company-hosted AI support assistant, and I don't discuss what I'm built on. About the "
    "transfer, I don't have that policy here; which plan do you have, so it can be checked?",
    output_other="I am a company-hosted AI support assistant. Subscription transfers: I need to check. Your plan?",
    wording_what="",  # the reply it would give drops what the user was told: not clearly only a difference
    extra=Step(
        "+link@clarify",
        "Offered the link to the help centre's subscriptions page.",
        "Offered the link to the help centre's subscriptions page.",
        "offered the help centre link",
        "a link to the help centre",
    ),
    gain=Step(
        "+short@clarify",
        "Kept the reply to three sentences, as the prompt asks for concise answers.",
        "Kept the reply to three sentences, as the prompt asks for concise answers.",
        "kept the reply short",
        "a shorter reply",
    ),
    loss="nomodel",
    loss2="identity",
    claim="noinvent",
    hidden="noinvent",
    extra_reply="I am a company-hosted AI support assistant. I can't share details about the technology behind me. "
    "I don't have a policy on subscription transfers in front of me: which plan are you on, so I can check? The "
    "help centre's subscriptions page may help meanwhile: help.example.com/subscriptions.",
    mode="chat",
    weak=(
        "identity",
        'Answered the identity question in its own words: "I\'m an AI assistant for support."',
        "answered the identity question",
        "the prescribed identity sentence became the model's own wording",
    ),
    weak_reply="I'm an AI assistant for support. I can't share details about the technology behind me. I don't have a "
    "policy on subscription transfers in front of me: which plan are you on, so I can check?",
    unreported="nomodel",
    outputs={
        "identity": [
            "[history] 2 earlier turns: password reset (resolved)",
            "[classifier] intents: identity_question, subscription_transfer",
            "[guard] identity question -> fixed answer",
        ],
        "nomodel": ["[guard] model question -> decline"],
        "noinvent": [
            "[kb] search 'subscription transfer' -> 0 results",
            "[kb] search 'transfer plan family' -> 0 results",
            "[kb] search 'gift subscription' -> 1 result (gift cards, not transfers)",
        ],
        "clarify": ["[style] concise, professional"],
    },
)

ZOD_BUMP = Scenario(
    id="deps-bump-commit",
    source="mp-copilot-instructions",
    section="GitHub Copilot Custom Instructions",
    input="Bump zod to 3.23 in the web package and commit it.",
    steps=[
        Step(
            "bump",
            "Set zod to ^3.23.8 in apps/web/package.json and ran `pnpm install` (pnpm-lock.yaml updated).",
            "Changed apps/web/package.json to zod ^3.23.8 and refreshed the lockfile with pnpm install.",
            "bumped zod and updated the lockfile",
            "the version bump",
            change=("apps/web/package.json", "changed", '-    "zod": "^3.22.4",\n+    "zod": "^3.23.8",'),
        ),
        Step(
            "lint",
            "Ran `pnpm lint`: passed.",
            "pnpm lint: no errors.",
            "ran pnpm lint",
            "pnpm lint before committing",
        ),
        Step(
            "format",
            "Ran `pnpm format`: no files changed.",
            "pnpm format left every file as it was.",
            "ran pnpm format",
            "pnpm format before committing",
        ),
        Step(
            "test",
            "Ran `pnpm test`: 212 tests passed.",
            "pnpm test: all 212 tests green.",
            "ran pnpm test",
            "pnpm test before committing",
        ),
        Step(
            "build",
            "Ran `pnpm build`: all 4 packages built.",
            "pnpm build finished for all 4 packages.",
            "ran pnpm build",
            "pnpm build before committing",
        ),
        Step(
            "commit",
            "Committed with a conventional message: `chore(deps): bump zod to 3.23`.",
            "Made the commit `chore(deps): bump zod to 3.23`, in conventional-commit form.",
            "committed with a conventional message",
            "the conventional commit message",
            lossy=("Committed: `Update zod`.", "committed"),
        ),
    ],
    output="zod is at ^3.23.8 in apps/web; committed.",
    output_same="Bumped zod to ^3.23.8 in the web app and made the commit.",
    output_other="",
    wording_what="",
    extra=Step(
        "+changelog@bump",
        "Skimmed zod's 3.23 release notes: no breaking changes listed.",
        "Skimmed zod's 3.23 release notes: no breaking changes listed.",
        "read the release notes",
        "a read of the release notes",
    ),
    gain=Step(
        "+dedupe@bump",
        "Ran `pnpm dedupe` so only one zod version remains in the lockfile.",
        "Ran `pnpm dedupe` so only one zod version remains in the lockfile.",
        "deduplicated the lockfile",
        "a deduplicated lockfile",
        change=("pnpm-lock.yaml", "changed", "-  /zod@3.22.4:\n"),
    ),
    loss="build",
    loss2="commit",
    claim="test",
    hidden="format",
    order=("lint", "format"),
    mode="tools",
    rules=".github/copilot-instructions.md",
    files=[
        ".github/copilot-instructions.md",
        "package.json",
        "pnpm-workspace.yaml",
        "pnpm-lock.yaml",
        "apps/web/package.json",
        "apps/web/vite.config.ts",
        "apps/api/package.json",
        "packages/ui/package.json",
        "packages/schema/package.json",
        "turbo.json",
    ],
    weak=(
        "test",
        "Ran `pnpm --filter web test`: 48 tests passed.",
        "ran pnpm test",
        "the whole test suite became the web package's tests only (48 of 212)",
    ),
    weak_out=["apps/web test$ vitest run", " Test Files  9 passed (9)", "      Tests  48 passed (48)"],
    unreported="format",
    order_label=EQUIVALENT,
    order_why="the candidate runs pnpm format before pnpm lint; format changed no file, so both checks see the same "
    "tree before the commit: a harmless reordering (the judge prompt: not a difference)",
    history=[
        "chore(deps): bump vite to 5.2",
        "feat(web): add signup form",
        "fix(api): validate email with zod",
        "chore: add turbo pipeline",
        "ci: run pnpm build on PRs",
    ],
    outputs={
        "bump": [
            "Scope: all 4 workspace projects",
            "Progress: resolved 1184, reused 1180, downloaded 4, added 4, done",
            "dependencies:",
            "- zod 3.22.4",
            "+ zod 3.23.8",
        ],
        "lint": [
            "apps/web lint$ eslint .",
            "apps/web lint: Done",
            "apps/api lint$ eslint .",
            "apps/api lint: Done",
        ],
        "format": ["prettier --check .", "All matched files use Prettier code style!"],
        "test": [
            "packages/ui test$ vitest run",
            " ✓ src/button.test.tsx (6 tests) 41ms",
            " ✓ src/form.test.tsx (11 tests) 88ms",
            " Test Files  38 passed (38)",
            "      Tests  212 passed (212)",
        ],
        "build": [
            "apps/web build$ vite build",
            "✓ 842 modules transformed.",
            "dist/assets/index-4f1c2b.js  412.66 kB │ gzip: 131.02 kB",
            "apps/api build$ tsc -p tsconfig.build.json",
        ],
        "commit": [
            "[main e4a7c19] chore(deps): bump zod to 3.23",
            " 2 files changed, 9 insertions(+), 9 deletions(-)",
        ],
    },
)

SLASH_COMMIT = Scenario(
    id="slash-commit-split",
    source="commit-slash-command",
    section="Commit Command",
    input="/commit",
    steps=[
        Step(
            "checks",
            "Ran the pre-commit checks (no --no-verify given): `pnpm lint` ok, `pnpm build` ok, `pnpm docs` ok.",
            "Since --no-verify was not passed, ran the checks first: lint, build and docs generation all passed.",
            "ran the pre-commit checks",
            "the pre-commit checks",
        ),
        Step(
            "stage",
            "Nothing was staged, so staged the modified files: `git add src/auth/login.ts README.md`.",
            "Found an empty index and staged both modified files (src/auth/login.ts, README.md).",
            "staged the modified files",
            "staging the files when nothing was staged",
        ),
        Step(
            "review",
            "Checked the staged diff for secrets and leftover debug output: none.",
            "Looked through the staged diff for credentials or stray console.log lines; found nothing.",
            "checked the diff for secrets and debug output",
            "the check of the diff for secrets and debug output",
        ),
        Step(
            "split",
            "The diff holds two unrelated changes, so suggested a split and made two commits: `✨ feat: add "
            "remember-me option to login` (login.ts) and `📝 docs: explain remember-me in README`.",
            "Proposed splitting the two unrelated changes and committed them apart: `✨ feat: add remember-me "
            "option to login` for login.ts, then `📝 docs: explain remember-me in README`.",
            "split the changes into two emoji conventional commits",
            "the split into atomic commits",
            lossy=(
                "Committed everything at once: `✨ feat: add remember-me option to login` (login.ts and README.md).",
                "committed the changes with an emoji conventional message",
            ),
            lossy_reply="Made one commit: ✨ feat: add remember-me option to login (it includes the README update).",
        ),
    ],
    output="Made two commits: ✨ feat: add remember-me option to login, and 📝 docs: explain remember-me in README.",
    output_same="Two commits created: the remember-me login option (✨ feat) and its README note (📝 docs).",
    output_other="Committed. Run `git log -2` to see the two commits.",
    wording_what="",  # the reply it would give drops what the user was told: not clearly only a difference
    extra=Step(
        "+status@stage",
        "Showed `git status --short` before committing.",
        "Showed `git status --short` before committing.",
        "showed git status",
        "a git status printout",
    ),
    gain=Step(
        "+body@split",
        "Gave commit 1 a body explaining why the option defaults to off.",
        "Gave commit 1 a body explaining why the option defaults to off.",
        "wrote a commit body",
        "a commit body explaining the default",
    ),
    loss="split",
    loss2="checks",
    claim="review",
    hidden="stage",
    mode="command",
    rules=".claude/commands/commit.md",
    files=[
        ".claude/commands/commit.md",
        "package.json",
        "tsconfig.build.json",
        "src/auth/login.ts",
        "src/auth/session.ts",
        "src/index.ts",
        "README.md",
    ],
    weak=(
        "review",
        "Skimmed the staged diff.",
        "checked the staged diff",
        "the check of the diff for secrets and debug output became a skim that looks for neither",
    ),
    weak_out=[],
    unreported="stage",
    history=[
        "✨ feat: add login form",
        "🐛 fix: keep session on refresh",
        "📝 docs: add auth section to README",
        "🔧 chore: add typedoc",
        "✅ test: cover logout",
    ],
    outputs={
        "checks": [
            "> app@1.4.0 lint",
            "> eslint src --max-warnings 0",
            "> app@1.4.0 build",
            "> tsc -p tsconfig.build.json",
            "> app@1.4.0 docs",
            "> typedoc src/index.ts",
            "[info] Documentation generated at ./docs",
        ],
        "stage": [" M README.md", " M src/auth/login.ts"],
        "review": ["git diff --staged | grep -nE 'console\\.log|API_KEY|SECRET' -> no match"],
        "split": [
            "[main 5d2e9a0] ✨ feat: add remember-me option to login",
            " 1 file changed, 18 insertions(+), 2 deletions(-)",
            "[main 8c0b6f3] 📝 docs: explain remember-me in README",
            " 1 file changed, 6 insertions(+)",
        ],
    },
)

SCENARIOS = [
    MIGRATION,
    GIT_EXPERT,
    DRM_RENAME,
    CV_TYPO,
    GEMISTAR_TOGGLE,
    CATS_PAGINATION,
    DOUBLE_CHARGE,
    IDENTITY,
    ZOD_BUMP,
    SLASH_COMMIT,
]
