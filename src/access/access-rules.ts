export const TRANSFORMS = ['reveal', 'mask', 'redact'] as const;
export type Transform = (typeof TRANSFORMS)[number];

/** An application's access rule: which containers it may touch with which token permissions, and what data it sees. */
export interface AccessRule {
  description: string | null;
  priority: number;
  container: string;
  transform: Transform;
  permissions: string[];
}
