// What the label use cases need from storage.
import type { TenantLabel } from './model.js';

export interface NewLabel {
  id: string;
  tenantId: string;
  name: string;
  nameNormalized: string;
  value: string | null;
  ownerPartnerTenantId: string;
  restricted: boolean;
  createdAt: Date;
}

export interface LabelStore {
  labelsFor(tenantIds: string[]): Promise<TenantLabel[]>;
  findLabel(id: string, forUpdate?: boolean): Promise<TenantLabel | undefined>;
  /** throws DuplicateKeyError('label.name') when the owner already has a label of that name on the tenant */
  insertLabels(labels: NewLabel[]): Promise<void>;
  updateLabel(id: string, patch: { name: string; nameNormalized: string; value: string | null; updatedAt: Date }): Promise<void>;
  deleteLabel(id: string): Promise<void>;
}
