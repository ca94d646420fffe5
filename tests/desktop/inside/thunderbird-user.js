// Thunderbird's profile in the desktop tier (user.js): `thunderbird -compose "to=…,subject=…"` opens a
// compose window straight away (no account hub, no default-client question, no notices), in plain text,
// with no inline spell checking; Ctrl+S saves the draft to "Mail/Local Folders/Drafts" (mbox), which the
// tier reads back. -compose needs a default account, which Local Folders cannot be: a POP3 account that
// never connects is the default (as Thunderbird's own test profiles have it, mail/test/browser/composition).
// --- no first-run UI ---
user_pref("mail.provider.suppress_dialog_on_startup", true);
user_pref("mail.shell.checkDefaultClient", false);
user_pref("mail.rights.override", true);
user_pref("mailnews.start_page.enabled", false);
user_pref("mailnews.start_page.url", "about:blank");
user_pref("mailnews.start_page.override_url", "about:blank");
user_pref("mail.inappnotifications.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.policy.dataSubmissionPolicyBypassNotification", true);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("app.update.auto", false);
user_pref("extensions.update.enabled", false);
user_pref("mail.spotlight.firstRunDone", true);
user_pref("mail.winsearch.firstRunDone", true);
// --- accounts: Local Folders + a never-contacted POP3 account (must exist: "none" cannot be default) ---
user_pref("mail.accountmanager.accounts", "account1,account2");
user_pref("mail.accountmanager.defaultaccount", "account2");
user_pref("mail.accountmanager.localfoldersserver", "server1");
user_pref("mail.account.lastKey", 2);
user_pref("mail.account.account1.server", "server1");
user_pref("mail.account.account2.server", "server2");
user_pref("mail.account.account2.identities", "id1");
user_pref("mail.server.server1.type", "none");
user_pref("mail.server.server1.hostname", "Local Folders");
user_pref("mail.server.server1.name", "Local Folders");
user_pref("mail.server.server1.userName", "nobody");
user_pref("mail.server.server1.directory-rel", "[ProfD]Mail/Local Folders");
user_pref("mail.server.server2.type", "pop3");
user_pref("mail.server.server2.hostname", "localhost");
user_pref("mail.server.server2.name", "tester@example.org");
user_pref("mail.server.server2.userName", "tester");
user_pref("mail.server.server2.directory-rel", "[ProfD]Mail/localhost");
user_pref("mail.server.server2.check_new_mail", false);
user_pref("mail.server.server2.login_at_startup", false);
user_pref("mail.server.server2.deferred_to_account", "account1");
user_pref("mail.identity.id1.fullName", "Tester");
user_pref("mail.identity.id1.useremail", "tester@example.org");
user_pref("mail.identity.id1.valid", true);
user_pref("mail.identity.id1.smtpServer", "smtp1");
user_pref("mail.identity.id1.draft_folder", "mailbox://nobody@Local%20Folders/Drafts");
user_pref("mail.identity.id1.drafts_folder_picker_mode", "1");
user_pref("mail.identity.id1.fcc_folder", "mailbox://nobody@Local%20Folders/Sent");
user_pref("mail.identity.id1.compose_html", false);
user_pref("mail.smtpservers", "smtp1");
user_pref("mail.smtp.defaultserver", "smtp1");
user_pref("mail.smtpserver.smtp1.type", "smtp");
user_pref("mail.smtpserver.smtp1.hostname", "localhost");
user_pref("mail.smtpserver.smtp1.username", "tester");
// --- compose ---
user_pref("mail.html_compose", false);
user_pref("mail.identity.default.compose_html", false);
user_pref("mail.spellcheck.inline", false);
user_pref("mail.compose.autosave", false);
user_pref("mailnews.wraplength", 0);
