// Accounts: developers, their portal passwords, invitations, mailed links and portal sessions.
import type { Status } from './apps.ts';

export interface Developer {
  id: string;
  email: string;
  name: string;
  status: Status;
  /**
   * Whether the developer proved the email address: through the mailed link, a password reset, or
   * an invitation; an operator's developers are vouched for. An unverified one registers no app.
   */
  verified: boolean;
  createdAt: number;
}

/** What a mailed link is for: confirming a sign-up's address, or setting a new password. */
export type EmailTokenPurpose = 'verify' | 'reset';

export interface AccountStore {
  /**
   * With `passwordHash`, the developer can log in to the portal at once (a sign-up). `verified`
   * defaults to true (an operator's developer); an open sign-up passes false.
   */
  createDeveloper(input: { email: string; name: string; now: number; passwordHash?: string; verified?: boolean }): Promise<Developer>;
  /**
   * If an unverified developer holds the email: deletes it with its apps (credentials, tokens,
   * usage), sessions and mailed links, and creates a verified developer for the email, without a
   * password, in one transaction. Undefined (and nothing changed) otherwise.
   */
  replaceUnverifiedDeveloper(input: { email: string; name: string; now: number }): Promise<Developer | undefined>;
  findDeveloper(email: string): Promise<Developer | undefined>;
  findDeveloperById(id: string): Promise<Developer | undefined>;
  listDevelopers(): Promise<Developer[]>;
  /**
   * Deletes the developer with their apps (credentials, tokens, usage), sessions, mailed links and
   * invitation, in one transaction; their tokens stop working at once. False when there is no such developer.
   */
  deleteDeveloper(id: string, now: number): Promise<boolean>;
  /** Disabling also revokes every token issued to the developer's apps up to `now` and ends every portal session; enabling brings neither back. */
  setDeveloperStatus(email: string, status: Status, now: number): Promise<Developer | undefined>;

  /** The developer's portal password hash: null when none is set yet, undefined when there is no such developer. */
  findPasswordHash(email: string): Promise<string | null | undefined>;
  /** Sets the password hash; resolves to whether the developer exists. */
  setPasswordHash(email: string, hash: string): Promise<boolean>;
  /** Gives the developer a one-time invitation (the SHA-256 of its code), replacing any earlier one. */
  setInvitation(email: string, codeHash: Buffer, expiresAt: number): Promise<boolean>;
  /**
   * Sets the password if the invitation matches and has not expired, spends it, marks the
   * developer verified (the code reached them) and ends the developer's sessions, in one transaction. Undefined when the invitation does not hold.
   */
  acceptInvitation(input: { email: string; codeHash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined>;
  /** Keeps a mailed link's token (its SHA-256), replacing the developer's earlier one for the same purpose. */
  saveEmailToken(input: { hash: Buffer; developerId: string; purpose: EmailTokenPurpose; now: number; expiresAt: number }): Promise<void>;
  /**
   * Spends an unexpired confirmation token of this developer and marks the developer verified, in
   * one transaction; undefined when the token does not hold.
   */
  confirmEmail(input: { hash: Buffer; developerId: string; now: number }): Promise<Developer | undefined>;
  /**
   * Spends an unexpired reset token: sets the password, marks the developer verified (the link
   * proved the address), and ends every session of theirs, in one transaction; undefined when the
   * token does not hold.
   */
  resetPassword(input: { hash: Buffer; passwordHash: string; now: number }): Promise<Developer | undefined>;
  /**
   * Starts a session only while the developer is active and `passwordHash` is still their
   * password: a login checked before a reset, a password change or the account's replacement
   * (scrypt takes a while, and waits its turn) starts nothing after it. False: nothing started.
   */
  createSession(input: { idHash: Buffer; developerId: string; passwordHash: string; now: number; expiresAt: number }): Promise<boolean>;
  /** The session's developer, if the session is unexpired and the developer active and confirmed. */
  findSession(idHash: Buffer, now: number): Promise<Developer | undefined>;
  deleteSession(idHash: Buffer): Promise<void>;
  /** Ends every session of the developer (a password change). */
  deleteSessions(developerId: string): Promise<void>;
}
