// A name (and one more value picked from a list) asked for in a small dialog: create or rename an organisation, a
// site (with its time zone) or a device group (with its site). A refusal shows beside its field.
import { Button, Modal, Select, Stack, TextInput } from '@mantine/core';
import { useState } from 'react';
import { FormError } from '../../components/FormError';
import { fieldsNamed, useFieldErrors } from '../../hooks/useFieldErrors';

/** A second field of the dialog: one value picked from a list (a site's time zone, a group's site). */
export interface Choice {
  /** The API's name of the field, for its errors to show beside it. */
  field: string;
  label: string;
  description?: string;
  data: { value: string; label: string }[];
  initial: string | null;
  /** Clearable: no value is a valid answer. */
  clearable?: boolean;
  placeholder?: string;
}

/** A name (and, with `choice`, one more value) asked for in a small dialog (create or rename). */
export function NameDialog({
  title,
  initial,
  opened,
  onClose,
  onSave,
  choice,
}: {
  title: string;
  initial?: string;
  opened: boolean;
  onClose: () => void;
  onSave: (name: string, choice: string | null) => Promise<unknown>;
  choice?: Choice;
}) {
  const [name, setName] = useState(initial ?? '');
  const [picked, setPicked] = useState<string | null>(choice?.initial ?? null);
  const errors = useFieldErrors(fieldsNamed('name', ...(choice ? [choice.field] : [])), [name, picked]);
  const [busy, setBusy] = useState(false);
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          errors.clear();
          try {
            await onSave(name.trim(), picked);
            setName('');
            onClose();
          } catch (err) {
            errors.show(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <Stack>
          <FormError text={errors.form} />
          <TextInput
            label="Name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={errors.fields.name}
            data-autofocus
          />
          {choice && (
            <Select
              label={choice.label}
              description={choice.description}
              data={choice.data}
              value={picked}
              onChange={setPicked}
              clearable={choice.clearable}
              allowDeselect={!!choice.clearable}
              placeholder={choice.placeholder}
              error={errors.fields[choice.field]}
              searchable
            />
          )}
          <Button type="submit" loading={busy} disabled={!name.trim()}>
            Save
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
