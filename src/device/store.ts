// What the device-authorization use cases need from storage.
import type { DeviceAuthorization, DeviceStatus } from './model.js';

export interface DeviceStore {
  /** throws DuplicateKeyError('device.userCode') when the user code is taken */
  insertDeviceAuthorization(a: DeviceAuthorization): Promise<void>;
  /** The authorization, locked until the transaction ends (one poll at a time). */
  lockByDeviceCode(hash: Buffer): Promise<DeviceAuthorization | undefined>;
  findByUserCode(userCode: string): Promise<DeviceAuthorization | undefined>;
  recordPoll(hash: Buffer, at: Date, intervalSeconds: number): Promise<void>;
  /** Moves a pending authorization to approved or denied for the user; whether it was pending. */
  decide(userCode: string, status: 'approved' | 'denied', userId: string, now: Date): Promise<boolean>;
  /** approved -> issued, once; whether this call did it. */
  markIssued(hash: Buffer): Promise<boolean>;
  setStatus(hash: Buffer, status: DeviceStatus): Promise<void>;
  /** Deletes authorizations that expired before `before`; how many. */
  deleteExpiredDeviceAuthorizations(before: Date): Promise<number>;
}
