//! The commands of `optics accounts …` and `optics tokens …`, and the functions that run them.
//! The binary parses its arguments (clap, in the binary) into these, opens the store
//! ([`super::open_store`]) and calls [`run_accounts`] or [`run_tokens`] with stdout and stdin.

use std::io::{BufRead, Write};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

use super::AccountError;
use super::admin::{self, AdminContext};
use super::model::{Account, Plan, TokenInfo};
use crate::auth::password::Password;
use crate::auth::token::random_secret;

/// `optics accounts …`
#[derive(Debug, Clone)]
pub enum AccountsCommand {
    /// Create an account. The password is read from stdin with `--password-stdin`; without
    /// it a random one is generated and printed once.
    Create {
        /// Login email.
        email: String,
        /// Plan.
        plan: Plan,
        /// Last day of the plan (YYYY-MM-DD, inclusive, UTC); default: no end.
        until: Option<NaiveDate>,
        /// Own monthly budget in data units; default: the plan's.
        monthly_budget: Option<u64>,
        /// Read the password from the first line of stdin.
        password_stdin: bool,
    },
    /// Change an account's plan.
    SetPlan {
        /// Login email.
        email: String,
        /// New plan.
        plan: Plan,
        /// Last day of the plan (YYYY-MM-DD, inclusive, UTC); default: no end.
        until: Option<NaiveDate>,
    },
    /// Set (or with no `--units`, clear) an account's own monthly budget.
    SetBudget {
        /// Login email.
        email: String,
        /// Units per month; omit to use the plan's budget.
        units: Option<u64>,
    },
    /// List accounts.
    List,
}

/// `optics tokens …`
#[derive(Debug, Clone)]
pub enum TokensCommand {
    /// Create a token; it is printed once and only its hash is kept.
    Create {
        /// The owner's email.
        email: String,
        /// A label.
        name: Option<String>,
        /// Lifetime in days (0 = never expires; default 365).
        expires_in_days: Option<u32>,
    },
    /// List an account's tokens (ids and prefixes only).
    List {
        /// The owner's email.
        email: String,
    },
    /// Revoke a token by id.
    Revoke {
        /// Token id (`tok_…`).
        id: String,
    },
}

/// The end of a plan that runs through `until` (inclusive): the next midnight UTC.
fn plan_end(until: Option<NaiveDate>) -> Option<DateTime<Utc>> {
    until.map(|day| {
        (day + TimeDelta::days(1))
            .and_time(chrono::NaiveTime::MIN)
            .and_utc()
    })
}

fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn describe_account(account: &Account, now: DateTime<Utc>) -> String {
    let budget = account
        .monthly_budget_units
        .map_or_else(|| "plan default".to_owned(), |u| u.to_string());
    let until = account
        .plan_expires_at
        .map(iso)
        .unwrap_or_else(|| "-".to_owned());
    format!(
        "{}\t{}\tplan={} (in force: {})\tplan_ends={}\tmonthly_budget={}",
        account.id,
        account.email,
        account.plan,
        account.active_plan(now),
        until,
        budget
    )
}

fn describe_token(token: &TokenInfo, now: DateTime<Utc>) -> String {
    let status = format!("{:?}", token.status(now)).to_lowercase();
    let expires = token
        .expires_at
        .map(iso)
        .unwrap_or_else(|| "never".to_owned());
    format!(
        "{}\t{}…\t{}\t{}\tcreated={}\texpires={}",
        token.id,
        token.prefix,
        status,
        token.name,
        iso(token.created_at),
        expires
    )
}

fn write_line(out: &mut dyn Write, line: &str) -> Result<(), AccountError> {
    writeln!(out, "{line}").map_err(|source| AccountError::Io {
        path: "<stdout>".into(),
        source,
    })
}

/// Runs an `optics accounts …` command, printing to `out`.
pub async fn run_accounts(
    ctx: &AdminContext,
    command: AccountsCommand,
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), AccountError> {
    let now = ctx.clock.now();
    match command {
        AccountsCommand::Create {
            email,
            plan,
            until,
            monthly_budget,
            password_stdin,
        } => {
            let (password, generated) = if password_stdin {
                let mut line = String::new();
                stdin
                    .read_line(&mut line)
                    .map_err(|source| AccountError::Io {
                        path: "<stdin>".into(),
                        source,
                    })?;
                (line.trim_end_matches(['\r', '\n']).to_owned(), false)
            } else {
                (random_secret()?, true)
            };
            let account = admin::create_account(
                ctx,
                &email,
                Password::new(password.clone())?,
                plan,
                plan_end(until),
                monthly_budget,
            )
            .await?;
            write_line(out, &describe_account(&account, now))?;
            if generated {
                write_line(out, &format!("password (shown once): {password}"))?;
            }
        }
        AccountsCommand::SetPlan { email, plan, until } => {
            let account = admin::set_plan(ctx, &email, plan, plan_end(until)).await?;
            write_line(out, &describe_account(&account, now))?;
        }
        AccountsCommand::SetBudget { email, units } => {
            let account = admin::set_budget(ctx, &email, units).await?;
            write_line(out, &describe_account(&account, now))?;
        }
        AccountsCommand::List => {
            for account in admin::list_accounts(ctx).await? {
                write_line(out, &describe_account(&account, now))?;
            }
        }
    }
    Ok(())
}

/// Runs an `optics tokens …` command, printing to `out`.
pub async fn run_tokens(
    ctx: &AdminContext,
    command: TokensCommand,
    out: &mut dyn Write,
) -> Result<(), AccountError> {
    let now = ctx.clock.now();
    match command {
        TokensCommand::Create {
            email,
            name,
            expires_in_days,
        } => {
            let issued = admin::create_token(ctx, &email, name.as_deref(), expires_in_days).await?;
            write_line(out, &describe_token(&issued.info, now))?;
            write_line(
                out,
                &format!("token (shown once): {}", issued.token.expose()),
            )?;
        }
        TokensCommand::List { email } => {
            for token in admin::list_tokens(ctx, &email).await? {
                write_line(out, &describe_token(&token, now))?;
            }
        }
        TokensCommand::Revoke { id } => {
            let token = admin::revoke_token(ctx, &id).await?;
            write_line(out, &describe_token(&token, now))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_plan_until_a_day_runs_through_that_day() {
        let day = NaiveDate::from_ymd_opt(2026, 12, 31).unwrap();
        assert_eq!(
            plan_end(Some(day)),
            Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap())
        );
        assert_eq!(plan_end(None), None);
    }
}
