/** The kinds of application (DESIGN: applications and keys); what each may be granted is in permissions.ts. */
export const APPLICATION_TYPES = ['private', 'public', 'management'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];
