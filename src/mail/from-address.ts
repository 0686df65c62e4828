// The From header of the mail the service sends (GATEHOUSE_MAIL_FROM), in one place for the server
// and the commands that queue mail.

/** GATEHOUSE_MAIL_FROM, else the product's name at no-reply@ the base URL's host. */
export function mailFrom(config: { mailFrom?: string | undefined; vendorName: string; baseUrl: string }): string {
  if (config.mailFrom) return config.mailFrom.trim();
  const name = config.vendorName.replace(/["\\]/g, (c) => `\\${c}`);
  return `"${name}" <no-reply@${new URL(config.baseUrl).hostname}>`;
}
