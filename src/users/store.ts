import type { RoleAssignment } from '../access/principal.js';

// What the user use cases need from storage.
export interface NewUser {
  id: string;
  tenantId: string;
  email: string;
  emailNormalized: string;
  passwordHash: string;
  createdAt: Date;
}

export interface UserStore {
  insertUser(user: NewUser): Promise<void>;
  insertRoleAssignments(assignments: (RoleAssignment & { principalId: string; createdAt: Date })[]): Promise<void>;
}
