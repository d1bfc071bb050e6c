//! The operators' CLI as the real binary: `optics accounts create|set-plan|list` and
//! `optics tokens create|list|revoke` against a temporary data directory, then the tokens used
//! against `optics serve` on the same directory (which must not invent an account of its own),
//! and the `--plan-budgets` flag refusing a bad value.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{OPTICS, Running, TempDir, get, start_listening};

/// Runs `optics <args>` with `stdin` and returns its output.
fn optics(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(OPTICS)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("OPTICS_DATA_DIR")
        .env_remove("OPTICS_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start optics");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `optics <args>`, expects success, returns stdout.
fn succeed(args: &[&str], stdin: &str) -> String {
    let output = optics(args, stdin);
    assert!(
        output.status.success(),
        "optics {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Starts `optics serve` on port 0 over `data_dir` (an empty snapshot store); returns it, its
/// address and what it printed.
fn serve(data_dir: &Path) -> (Running, String, String) {
    let mut command = Command::new(OPTICS);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env_remove("RUST_LOG")
        .env_remove("OPTICS_DB")
        .env_remove("OPTICS_LIMITER")
        .env_remove("OPTICS_BOOTSTRAP_LOCAL_ACCOUNT")
        .stderr(Stdio::inherit());
    start_listening(command)
}

/// The tab-separated fields of the output line that starts with `first`.
fn fields<'a>(output: &'a str, first: &str) -> Vec<&'a str> {
    output
        .lines()
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .find(|f| f[0] == first)
        .unwrap_or_else(|| panic!("no line for {first} in:\n{output}"))
}

#[test]
fn operators_manage_accounts_and_tokens_and_a_revoked_token_is_refused_by_the_server() {
    let dir = TempDir::new("accounts-cli");
    let data_dir = dir.path().to_str().unwrap();

    // Two accounts: one with a password from stdin, one with a generated password.
    let created = succeed(
        &[
            "accounts",
            "create",
            "--email",
            "Ops@Example.com",
            "--plan",
            "basic",
            "--password-stdin",
            "--data-dir",
            data_dir,
        ],
        "operator-password-1\n",
    );
    assert!(!created.contains("operator-password-1"), "{created}");
    let line = created.lines().next().unwrap();
    let ops_fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(ops_fields[1], "ops@example.com", "{created}");
    assert!(line.contains("plan=basic"), "{line}");
    let generated = succeed(
        &[
            "accounts",
            "--data-dir",
            data_dir,
            "create",
            "--email",
            "analyst@example.com",
            "--plan",
            "premium",
        ],
        "",
    );
    let password = generated
        .lines()
        .find_map(|l| l.strip_prefix("password (shown once): "))
        .unwrap_or_else(|| panic!("no generated password in {generated}"));
    assert_eq!(password.len(), 43, "a 256-bit base62 secret");
    // The same email twice is refused with a reason, exit status non-zero.
    let twice = optics(
        &[
            "accounts",
            "create",
            "--email",
            "ops@example.com",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    assert!(!twice.status.success());
    assert!(
        String::from_utf8_lossy(&twice.stderr).contains("already exists"),
        "{}",
        String::from_utf8_lossy(&twice.stderr)
    );

    let upgraded = succeed(
        &[
            "accounts",
            "set-plan",
            "--email",
            "ops@example.com",
            "--plan",
            "pro",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    assert!(upgraded.contains("plan=pro (in force: pro)"), "{upgraded}");
    let ghost = optics(
        &[
            "accounts",
            "set-plan",
            "--email",
            "ghost@example.com",
            "--plan",
            "pro",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    assert!(!ghost.status.success());
    assert!(String::from_utf8_lossy(&ghost.stderr).contains("no such account"));

    let listed = succeed(&["accounts", "list", "--data-dir", data_dir], "");
    let emails: Vec<&str> = listed
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(emails, ["ops@example.com", "analyst@example.com"]);
    assert!(listed.contains("plan=premium"), "{listed}");

    // A token, shown once.
    let issued = succeed(
        &[
            "tokens",
            "create",
            "--email",
            "ops@example.com",
            "--name",
            "ci",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    let secret = issued
        .lines()
        .find_map(|l| l.strip_prefix("token (shown once): "))
        .unwrap_or_else(|| panic!("no token in {issued}"))
        .to_owned();
    assert!(
        secret.starts_with("optx_") && secret.len() == 54,
        "{secret}"
    );
    let token_id = issued.lines().next().unwrap().split('\t').next().unwrap();
    assert!(token_id.starts_with("tok_"), "{issued}");
    let tokens = succeed(
        &[
            "tokens",
            "list",
            "--email",
            "ops@example.com",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    assert!(!tokens.contains(&secret), "the secret is never listed");
    let token_line = fields(&tokens, token_id);
    assert_eq!(token_line[1], format!("{}…", &secret[..9]));
    assert_eq!((token_line[2], token_line[3]), ("active", "ci"));

    // `optics serve` over the same directory: no account of its own, the operator's token
    // opens the data API with the plan set above.
    let (server, address, printed) = serve(dir.path());
    assert!(
        !dir.path().join("api-token").exists(),
        "serve made no local account:\n{printed}"
    );
    let (status, body) = get(&address, "/api/mcp/data/me/usage", Some(&secret));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["plan"], "pro");
    assert_eq!(body["data"]["active_tokens"][0]["id"], token_id);

    let revoked = succeed(&["tokens", "revoke", token_id, "--data-dir", data_dir], "");
    assert_eq!(fields(&revoked, token_id)[2], "revoked", "{revoked}");
    let (status, body) = get(&address, "/api/mcp/data/me/usage", Some(&secret));
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["success"], false);
    drop(server);

    let tokens = succeed(
        &[
            "tokens",
            "list",
            "--email",
            "ops@example.com",
            "--data-dir",
            data_dir,
        ],
        "",
    );
    assert_eq!(fields(&tokens, token_id)[2], "revoked");
    let accounts = succeed(&["accounts", "list", "--data-dir", data_dir], "");
    assert_eq!(
        accounts.lines().count(),
        2,
        "still only the operator's accounts"
    );
}

#[test]
fn a_bad_plan_budget_is_refused_before_anything_starts() {
    for command in ["serve", "run"] {
        let output = optics(&[command, "--plan-budgets", "pro=lots"], "");
        assert!(!output.status.success(), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--plan-budgets") && stderr.contains("whole number"),
            "{command}: {stderr}"
        );
    }
}
