import { Column, CreateDateColumn } from 'typeorm';

/**
 * The created/modified columns every managed resource carries, in one place: who (the application that
 * acted, null for the operator CLI or the vault itself) and when. Entities extend it; the columns and
 * their names stay those of the migrations.
 */
export abstract class Audited {
  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;
}
